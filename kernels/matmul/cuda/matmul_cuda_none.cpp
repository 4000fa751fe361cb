// Built when the CUDA backend is not: the backend is then never chosen, and a direct call says why it cannot run.
#include "engine/backend.h"
#include "engine/errors.h"
#include "kernels/matmul/matmul_cuda.h"

namespace dlsys::matmul::cuda {

TimingStats run(Variant, const Shape&, const float*, const float*, float*, const MeasureOptions&) {
  throw RunFailure(cuda_status().reason);
}

}  // namespace dlsys::matmul::cuda
