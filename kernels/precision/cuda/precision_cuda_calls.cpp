// The program's side of these CUDA entry points: each call goes through the CUDA library's table
// (kernels/common/cuda_kernels.h), which throws RunFailure saying why where the library is absent.
#include "kernels/common/cuda_kernels.h"

namespace dlsys::precision::cuda {

DeviceRounding round_on_device(const std::vector<float>& values) {
  return cuda_kernels().precision.round_on_device(values);
}
TimingStats gemm(GemmFormat format, std::int64_t n, const float* a, const float* b, float* c,
                 const MeasureOptions& options) {
  return cuda_kernels().precision.gemm(format, n, a, b, c, options);
}

}  // namespace dlsys::precision::cuda
