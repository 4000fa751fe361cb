// The program's side of these CUDA entry points: each call goes through the CUDA library's table
// (kernels/common/cuda_kernels.h), which throws RunFailure saying why where the library is absent.
#include "kernels/common/cuda_kernels.h"

namespace dlsys::fusion::cuda {

namespace {
const Calls& calls() { return cuda_kernels().fusion; }
}  // namespace

void add_bias(float* t, const float* x, const float* b, std::int64_t rows, std::int64_t cols, Bias bias) {
  calls().add_bias(t, x, b, rows, cols, bias);
}
void relu_pass(float* y, const float* t, std::int64_t n) { calls().relu_pass(y, t, n); }
void add_bias_relu(float* y, const float* x, const float* b, std::int64_t rows, std::int64_t cols, Bias bias) {
  calls().add_bias_relu(y, x, b, rows, cols, bias);
}
void cos_pass(float* y, const float* x, std::int64_t n) { calls().cos_pass(y, x, n); }
void cos_cos(float* y, const float* x, std::int64_t n) { calls().cos_cos(y, x, n); }
void gelu_pass(float* y, const float* x, std::int64_t n) { calls().gelu_pass(y, x, n); }
void chain_op(float* y, const float* x, std::int64_t n, int l) { calls().chain_op(y, x, n, l); }
void chain_fused(float* y, const float* x, std::int64_t n, int length) { calls().chain_fused(y, x, n, length); }
void copy(float* y, const float* x, std::int64_t n) { calls().copy(y, x, n); }
void empty_kernel() { calls().empty_kernel(); }

}  // namespace dlsys::fusion::cuda
