// The program's side of these CUDA entry points: each call goes through the CUDA library's table
// (kernels/common/cuda_kernels.h), which throws RunFailure saying why where the library is absent.
#include "kernels/common/cuda_kernels.h"

namespace dlsys::quant::cuda {

TimingStats gemv_fp32(const float* w, std::int64_t rows, std::int64_t cols, const float* x, float* y,
                      const MeasureOptions& options) {
  return cuda_kernels().quant.gemv_fp32(w, rows, cols, x, y, options);
}
TimingStats gemv_fp16(const std::uint16_t* w_fp16, std::int64_t rows, std::int64_t cols, const std::uint16_t* x_fp16,
                      float* y, const MeasureOptions& options) {
  return cuda_kernels().quant.gemv_fp16(w_fp16, rows, cols, x_fp16, y, options);
}
TimingStats gemv_quantized(const QuantizedMatrix& q, const float* x, float* y, const MeasureOptions& options,
                           int shape) {
  return cuda_kernels().quant.gemv_quantized(q, x, y, options, shape);
}

}  // namespace dlsys::quant::cuda
