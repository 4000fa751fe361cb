// Built when the CUDA backend is not: the precision lesson then never chooses it, and a direct call says why.
#include "engine/backend.h"
#include "engine/errors.h"
#include "kernels/precision/precision_cuda.h"

namespace dlsys::precision::cuda {

DeviceRounding round_on_device(const std::vector<float>&) { throw RunFailure(cuda_status().reason); }

TimingStats gemm(GemmFormat, std::int64_t, const float*, const float*, float*, const MeasureOptions&) {
  throw RunFailure(cuda_status().reason);
}

}  // namespace dlsys::precision::cuda
