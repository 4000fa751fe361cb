// Built when the CUDA backend is not: the backend is then never chosen, and a direct call says why it cannot run.
#include "engine/backend.h"
#include "engine/errors.h"
#include "kernels/collectives/collectives_cuda.h"

namespace dlsys::collectives::cuda {

bool nccl_compiled() { return false; }

Placement place_ranks(int) { throw RunFailure(cuda_status().reason); }

GpuMeasurement measure(Op, Implementation, int, std::int64_t, const MeasureOptions&, const std::vector<float*>&) {
  throw RunFailure(cuda_status().reason);
}

double copy_bandwidth_gbps(int, std::int64_t) { throw RunFailure(cuda_status().reason); }

}  // namespace dlsys::collectives::cuda
