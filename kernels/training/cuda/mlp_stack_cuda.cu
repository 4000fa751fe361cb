// The residual MLP stack on cuBLAS (see mlp_stack_cuda.h), step for step as kernels/training/cpu/mlp_stack.cpp and
// pipeline/mlp_block.h: a = relu(x W1), y = x + a W2; backward dz = (dy W2^T) [a > 0], dx = dy + dz W1^T,
// dW2 += a^T dy, dW1 += x^T dz.
#include "kernels/common/cuda/cuda_check.h"
#include "kernels/common/cuda/launch.h"
#include "kernels/training/cuda/mlp_stack_cuda.h"

namespace dlsys::training::cuda {

namespace {

using dlsys::cuda::grid_stride_blocks;
using dlsys::cuda::kGridStrideThreads;

#define STACK_GRID_LOOP(i, n)                                                         \
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < (n); \
       i += std::int64_t(gridDim.x) * blockDim.x)

__global__ void relu_kernel(float* a, std::int64_t n) { STACK_GRID_LOOP(i, n) a[i] = a[i] > 0.0f ? a[i] : 0.0f; }

// relu'(z) = [z > 0] = [a > 0]
__global__ void relu_mask_kernel(float* dz, const float* a, std::int64_t n) {
  STACK_GRID_LOOP(i, n) if (!(a[i] > 0.0f)) dz[i] = 0.0f;
}

__global__ void loss_gradient_kernel(float* dy, const float* y, const float* t, float scale, std::int64_t n) {
  STACK_GRID_LOOP(i, n) dy[i] = (y[i] - t[i]) * scale;
}

// Each thread sums its share of 0.5 (y - t)^2 / divisor and adds it once (fp64 atomics: sm_60 and later).
__global__ void loss_kernel(double* loss, const float* y, const float* t, double scale, std::int64_t n) {
  double sum = 0;
  STACK_GRID_LOOP(i, n) sum += double(y[i] - t[i]) * double(y[i] - t[i]);
  if (sum != 0) atomicAdd(loss, sum * scale);
}

__global__ void sgd_kernel(float* w, const float* g, float lr, std::int64_t n) {
  STACK_GRID_LOOP(i, n) w[i] -= lr * g[i];
}

void check_launch() { DLSYS_CUDA_CHECK(cudaGetLastError()); }

// Row-major C (m x n) = op(A) op(B) + beta C on column-major cuBLAS: a row-major matrix read as column-major is its
// transpose, so cuBLAS computes C^T = op(B)^T op(A)^T with the same transpose flags.
void gemm(cublasHandle_t handle, bool trans_a, bool trans_b, int m, int n, int k, const float* a, const float* b,
          float beta, float* c) {
  const float one = 1.0f;
  DLSYS_CUDA_CHECK(cublasSgemm(handle, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, n, m,
                               k, &one, b, trans_b ? k : n, a, trans_a ? m : k, &beta, c, n));
}

float* block(DeviceActivations& acts, int width, int index) {
  return acts.storage + std::int64_t(index) * acts.rows * width;
}

}  // namespace

void load_inputs(cudaStream_t stream, const StackShape& shape, const float* inputs, DeviceActivations& acts) {
  const std::int64_t elements = std::int64_t(acts.rows) * shape.width;
  DLSYS_CUDA_CHECK(cudaMemcpyAsync(block(acts, shape.width, 0), inputs, std::size_t(elements) * sizeof(float),
                                   cudaMemcpyDeviceToDevice, stream));
}

void forward_layer(cublasHandle_t blas, cudaStream_t stream, const StackShape& shape, int layer, const float* w1,
                   DeviceActivations& acts) {
  const int w = shape.width, rows = acts.rows;
  const std::int64_t square = std::int64_t(w) * w, elements = std::int64_t(rows) * w;
  float *x = block(acts, w, 2 * layer), *a = block(acts, w, 2 * layer + 1), *y = block(acts, w, 2 * layer + 2);
  gemm(blas, false, false, rows, w, w, x, w1, 0.0f, a);
  relu_kernel<<<grid_stride_blocks(elements), kGridStrideThreads, 0, stream>>>(a, elements);
  check_launch();
  DLSYS_CUDA_CHECK(cudaMemcpyAsync(y, x, std::size_t(elements) * sizeof(float), cudaMemcpyDeviceToDevice, stream));
  gemm(blas, false, false, rows, w, w, a, w1 + square, 1.0f, y);
}

void add_loss(cudaStream_t stream, const StackShape& shape, const float* targets, double loss_divisor,
              DeviceActivations& acts, double* loss) {
  const std::int64_t elements = std::int64_t(acts.rows) * shape.width;
  loss_kernel<<<grid_stride_blocks(elements), kGridStrideThreads, 0, stream>>>(
      loss, block(acts, shape.width, 2 * shape.layers), targets, 0.5 / loss_divisor, elements);
  check_launch();
}

void loss_gradient(cudaStream_t stream, const StackShape& shape, const float* targets, double loss_divisor,
                   DeviceActivations& acts) {
  const std::int64_t elements = std::int64_t(acts.rows) * shape.width;
  loss_gradient_kernel<<<grid_stride_blocks(elements), kGridStrideThreads, 0, stream>>>(
      acts.scratch, block(acts, shape.width, 2 * shape.layers), targets, float(1.0 / loss_divisor), elements);
  check_launch();
}

void backward_layer(cublasHandle_t blas, cudaStream_t stream, const StackShape& shape, int layer, const float* w1,
                    DeviceActivations& acts, float* grad) {
  const int w = shape.width, rows = acts.rows;
  const std::int64_t square = std::int64_t(w) * w, elements = std::int64_t(rows) * w;
  float* dy = acts.scratch;
  float* dz = acts.scratch + elements;
  float* dx = acts.scratch + 2 * elements;
  const float *x = block(acts, w, 2 * layer), *a = block(acts, w, 2 * layer + 1);
  gemm(blas, false, true, rows, w, w, dy, w1 + square, 0.0f, dz);
  relu_mask_kernel<<<grid_stride_blocks(elements), kGridStrideThreads, 0, stream>>>(dz, a, elements);
  check_launch();
  DLSYS_CUDA_CHECK(cudaMemcpyAsync(dx, dy, std::size_t(elements) * sizeof(float), cudaMemcpyDeviceToDevice, stream));
  gemm(blas, false, true, rows, w, w, dz, w1, 1.0f, dx);
  gemm(blas, true, false, w, w, rows, a, dy, 1.0f, grad + square);
  gemm(blas, true, false, w, w, rows, x, dz, 1.0f, grad);
  // dL/dx of this layer is dL/dy of the one below.
  DLSYS_CUDA_CHECK(cudaMemcpyAsync(dy, dx, std::size_t(elements) * sizeof(float), cudaMemcpyDeviceToDevice, stream));
}

void forward(cublasHandle_t blas, cudaStream_t stream, const StackShape& shape, const LayerWeights& weights,
             const float* inputs, DeviceActivations& acts) {
  load_inputs(stream, shape, inputs, acts);
  for (int layer = 0; layer < shape.layers; ++layer) forward_layer(blas, stream, shape, layer, weights(layer), acts);
}

void backward(cublasHandle_t blas, cudaStream_t stream, const StackShape& shape, const LayerWeights& weights,
              const float* targets, double loss_divisor, DeviceActivations& acts,
              const std::function<float*(int layer)>& grad_of_layer,
              const std::function<void(int layer)>& on_layer_ready) {
  loss_gradient(stream, shape, targets, loss_divisor, acts);
  for (int layer = shape.layers - 1; layer >= 0; --layer) {
    backward_layer(blas, stream, shape, layer, weights(layer), acts, grad_of_layer(layer));
    on_layer_ready(layer);
  }
}

void sgd(cudaStream_t stream, float* weights, const float* grads, float learning_rate, std::int64_t count) {
  sgd_kernel<<<grid_stride_blocks(count), kGridStrideThreads, 0, stream>>>(weights, grads, learning_rate, count);
  check_launch();
}

}  // namespace dlsys::training::cuda
