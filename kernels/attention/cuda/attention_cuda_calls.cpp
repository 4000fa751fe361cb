// The program's side of these CUDA entry points: each call goes through the CUDA library's table
// (kernels/common/cuda_kernels.h), which throws RunFailure saying why where the library is absent.
#include "kernels/common/cuda_kernels.h"

namespace dlsys::attention::cuda {

RunStats run(const Request& request, const Problem& problem, const float* q, const float* k, const float* v, float* o,
             const MeasureOptions& options) {
  return cuda_kernels().attention.run(request, problem, q, k, v, o, options);
}

}  // namespace dlsys::attention::cuda
