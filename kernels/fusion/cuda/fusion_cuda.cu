// The fusion lesson's passes as CUDA kernels (see fusion_cuda.h): one grid-stride map per pass, each element's value
// given by a small function object, so unfused and fused kernels differ only in how many passes they make and what
// stays in registers between them.
#include "kernels/common/cuda/cuda_check.h"
#include "kernels/common/cuda/launch.h"
#include "kernels/fusion/fusion_cuda.h"

namespace dlsys::fusion::cuda {

namespace {

using dlsys::cuda::grid_stride_blocks;
using dlsys::cuda::kGridStrideThreads;

__device__ inline float relu(float v) { return v > 0.0f ? v : 0.0f; }

__device__ inline float bias_at(const float* b, std::int64_t i, std::int64_t cols, Bias bias) {
  return bias == Bias::Broadcast ? b[i % cols] : b[i];
}

struct AddBias {
  const float *x, *b;
  std::int64_t cols;
  Bias bias;
  __device__ float operator()(std::int64_t i) const { return x[i] + bias_at(b, i, cols, bias); }
};
struct AddBiasRelu {
  const float *x, *b;
  std::int64_t cols;
  Bias bias;
  __device__ float operator()(std::int64_t i) const { return relu(x[i] + bias_at(b, i, cols, bias)); }
};
struct Relu {
  const float* x;
  __device__ float operator()(std::int64_t i) const { return relu(x[i]); }
};
struct Cos {
  const float* x;
  __device__ float operator()(std::int64_t i) const { return cosf(x[i]); }
};
struct CosCos {
  const float* x;
  __device__ float operator()(std::int64_t i) const { return cosf(cosf(x[i])); }
};
// GELU with the tanh approximation, as gelu_reference computes it in double.
struct Gelu {
  const float* x;
  __device__ float operator()(std::int64_t i) const {
    const float v = x[i];
    return 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
  }
};
struct ChainStep {
  const float* x;
  float a, c;
  __device__ float operator()(std::int64_t i) const { return x[i] * a + c; }
};
struct Chain {
  const float* x;
  int length;
  __device__ float operator()(std::int64_t i) const {
    float v = x[i];
    for (int l = 0; l < length; ++l) v = v * chain_a(l) + chain_c(l);
    return v;
  }
};
struct Copy {
  const float* x;
  __device__ float operator()(std::int64_t i) const { return x[i]; }
};

template <typename Op>
__global__ void map_kernel(float* y, std::int64_t n, Op op) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    y[i] = op(i);
}

template <typename Op>
void map(float* y, std::int64_t n, Op op) {
  map_kernel<<<grid_stride_blocks(n), kGridStrideThreads>>>(y, n, op);
  DLSYS_CUDA_CHECK(cudaGetLastError());
}

__global__ void nothing() {}

}  // namespace

void add_bias(float* t, const float* x, const float* b, std::int64_t rows, std::int64_t cols, Bias bias) {
  map(t, rows * cols, AddBias{x, b, cols, bias});
}
void relu_pass(float* y, const float* t, std::int64_t n) { map(y, n, Relu{t}); }
void add_bias_relu(float* y, const float* x, const float* b, std::int64_t rows, std::int64_t cols, Bias bias) {
  map(y, rows * cols, AddBiasRelu{x, b, cols, bias});
}
void cos_pass(float* y, const float* x, std::int64_t n) { map(y, n, Cos{x}); }
void cos_cos(float* y, const float* x, std::int64_t n) { map(y, n, CosCos{x}); }
void gelu_pass(float* y, const float* x, std::int64_t n) { map(y, n, Gelu{x}); }
void chain_op(float* y, const float* x, std::int64_t n, int l) { map(y, n, ChainStep{x, chain_a(l), chain_c(l)}); }
void chain_fused(float* y, const float* x, std::int64_t n, int length) { map(y, n, Chain{x, length}); }
void copy(float* y, const float* x, std::int64_t n) { map(y, n, Copy{x}); }

void empty_kernel() {
  nothing<<<1, 1>>>();
  DLSYS_CUDA_CHECK(cudaGetLastError());
}

}  // namespace dlsys::fusion::cuda
