#pragma once
// The fusion kernels on a GPU: the same passes as fusion.h, one CUDA kernel each, on device pointers (see
// kernels/common/device_buffer.h), launched on the default stream and returning at once. cos and tanh are CUDA's
// full-precision cosf and tanhf. Without CUDA in the build each throws RunFailure saying why.
#include <cstdint>

#include "kernels/fusion/fusion_math.h"

namespace dlsys::fusion::cuda {

void add_bias(float* t, const float* x, const float* b, std::int64_t rows, std::int64_t cols, Bias bias);
void relu_pass(float* y, const float* t, std::int64_t n);
void add_bias_relu(float* y, const float* x, const float* b, std::int64_t rows, std::int64_t cols, Bias bias);
void cos_pass(float* y, const float* x, std::int64_t n);
void cos_cos(float* y, const float* x, std::int64_t n);
void gelu_pass(float* y, const float* x, std::int64_t n);
void chain_op(float* y, const float* x, std::int64_t n, int l);
void chain_fused(float* y, const float* x, std::int64_t n, int length);
void copy(float* y, const float* x, std::int64_t n);
// A kernel that does nothing: what one launch costs with no bytes to move.
void empty_kernel();

}  // namespace dlsys::fusion::cuda
