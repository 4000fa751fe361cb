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

// The loss in a fixed order: each thread sums a fixed stride, then the block halves its partial sums in turn.
constexpr int kLossThreads = 256;
__global__ void ordered_loss_kernel(double* loss, const float* y, const float* t, double scale, std::int64_t n) {
  __shared__ double partial[kLossThreads];
  double sum = 0;
  for (std::int64_t i = threadIdx.x; i < n; i += kLossThreads) sum += double(y[i] - t[i]) * double(y[i] - t[i]);
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int stride = kLossThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) *loss = partial[0] * scale;
}

float* at(DeviceActivations& acts, std::int64_t offset) { return acts.storage + offset; }
const float* input_of(const StackShape& shape, DeviceActivations& acts, int layer) {
  if (layer == 0 && acts.first_input != nullptr) return acts.first_input;
  return at(acts, layout(shape, acts).input_offset(layer));
}

void copy_floats(cudaStream_t stream, float* to, const float* from, std::int64_t count) {
  DLSYS_CUDA_CHECK(cudaMemcpyAsync(to, from, std::size_t(count) * sizeof(float), cudaMemcpyDeviceToDevice, stream));
}

}  // namespace

void load_inputs(cudaStream_t stream, const StackShape& shape, const float* inputs, DeviceActivations& acts) {
  copy_floats(stream, at(acts, layout(shape, acts).input_offset(0)), inputs, std::int64_t(acts.rows) * shape.width);
}

void forward_block(cublasHandle_t blas, cudaStream_t stream, const StackShape& shape, int rows, const float* w1,
                   const float* x, float* a, float* y) {
  const int w = shape.width, f = shape.inner();
  const std::int64_t hidden = std::int64_t(rows) * f, elements = std::int64_t(rows) * w;
  gemm(blas, false, false, rows, f, w, x, w1, 0.0f, a);
  relu_kernel<<<grid_stride_blocks(hidden), kGridStrideThreads, 0, stream>>>(a, hidden);
  check_launch();
  copy_floats(stream, y, x, elements);
  gemm(blas, false, false, rows, w, f, a, w1 + std::int64_t(w) * f, 1.0f, y);
}

void forward_layer(cublasHandle_t blas, cudaStream_t stream, const StackShape& shape, int layer, const float* w1,
                   DeviceActivations& acts) {
  const StackLayout l = layout(shape, acts);
  forward_block(blas, stream, shape, acts.rows, w1, input_of(shape, acts, layer), at(acts, l.hidden_offset(layer)),
                at(acts, l.input_offset(layer + 1)));
}

void add_loss(cudaStream_t stream, const StackShape& shape, const float* targets, double loss_divisor,
              DeviceActivations& acts, double* loss) {
  const std::int64_t elements = std::int64_t(acts.rows) * shape.width;
  loss_kernel<<<grid_stride_blocks(elements), kGridStrideThreads, 0, stream>>>(
      loss, at(acts, layout(shape, acts).input_offset(shape.layers)), targets, 0.5 / loss_divisor, elements);
  check_launch();
}

void squared_error_loss(cudaStream_t stream, const float* y, const float* targets, std::int64_t elements,
                        double loss_divisor, double* loss) {
  ordered_loss_kernel<<<1, kLossThreads, 0, stream>>>(loss, y, targets, 0.5 / loss_divisor, elements);
  check_launch();
}

void squared_error_gradient(cudaStream_t stream, const float* y, const float* targets, std::int64_t elements,
                            double loss_divisor, float* dy) {
  loss_gradient_kernel<<<grid_stride_blocks(elements), kGridStrideThreads, 0, stream>>>(
      dy, y, targets, float(1.0 / loss_divisor), elements);
  check_launch();
}

void loss_gradient(cudaStream_t stream, const StackShape& shape, const float* targets, double loss_divisor,
                   DeviceActivations& acts) {
  squared_error_gradient(stream, at(acts, layout(shape, acts).input_offset(shape.layers)), targets,
                         std::int64_t(acts.rows) * shape.width, loss_divisor, acts.scratch);
}

void backward_block(cublasHandle_t blas, cudaStream_t stream, const StackShape& shape, int rows, const float* w1,
                    const float* x, const float* a, float* dy, float* dz, float* dx, float* grad) {
  const int w = shape.width, f = shape.inner();
  const std::int64_t w1_size = std::int64_t(w) * f, hidden = std::int64_t(rows) * f, elements = std::int64_t(rows) * w;
  gemm(blas, false, true, rows, f, w, dy, w1 + w1_size, 0.0f, dz);
  relu_mask_kernel<<<grid_stride_blocks(hidden), kGridStrideThreads, 0, stream>>>(dz, a, hidden);
  check_launch();
  copy_floats(stream, dx, dy, elements);
  gemm(blas, false, true, rows, w, f, dz, w1, 1.0f, dx);
  gemm(blas, true, false, f, w, rows, a, dy, 1.0f, grad + w1_size);
  gemm(blas, true, false, w, f, rows, x, dz, 1.0f, grad);
  // dL/dx of this layer is dL/dy of the one below.
  copy_floats(stream, dy, dx, elements);
}

void backward_layer(cublasHandle_t blas, cudaStream_t stream, const StackShape& shape, int layer, const float* w1,
                    DeviceActivations& acts, float* grad) {
  const StackLayout l = layout(shape, acts);
  backward_block(blas, stream, shape, acts.rows, w1, input_of(shape, acts, layer), at(acts, l.hidden_offset(layer)),
                 acts.scratch, acts.scratch + l.scratch_dz_offset(), acts.scratch + l.scratch_dx_offset(), grad);
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
