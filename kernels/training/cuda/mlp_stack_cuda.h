#pragma once
// mlp_stack.h's forward and backward for one rank on cuBLAS (included by .cu files only): the same math, layer by
// layer, enqueued on the rank's stream through its cuBLAS handle (fp32, cuBLAS's default math: no TF32), at any
// expansion e. Results are close to the CPU's, not bit-identical: cuBLAS sums in another order.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>

#include "kernels/training/mlp_stack.h"
#include "kernels/training/stack_layout.h"

namespace dlsys::training::cuda {

// What forward keeps for backward on the device, for `rows` rows, laid out as stack_layout.h says (with e = 1: (2
// layers + 1) blocks of (rows, width), input(l) at block 2l, hidden(l) at 2l + 1, the output at 2 layers), and
// backward's scratch dy, dz, dx. Pointers into memory the caller owns. Given `first_input` (a checkpoint kept
// elsewhere), layer 0 reads it and `storage` starts at hidden(0).
struct DeviceActivations {
  int rows = 0;
  float* storage = nullptr;  // activation_floats(shape, rows), or layout(...).floats() with first_input
  float* scratch = nullptr;  // scratch_floats(shape, rows)
  const float* first_input = nullptr;
};
inline StackLayout layout(const StackShape& shape, const DeviceActivations& acts) {
  return StackLayout{shape, acts.rows, acts.first_input != nullptr};
}
inline std::int64_t activation_floats(const StackShape& shape, int rows) {
  return StackLayout{shape, rows, false}.floats();
}
inline std::int64_t scratch_floats(const StackShape& shape, int rows) {
  return StackLayout{shape, rows, false}.scratch_floats();
}

// The pieces, for callers that must act between layers (ZeRO stage 3 all-gathers each layer's weights first):
// inputs into input(0); one layer forward (W1 at w1, W2 at w1 + width x inner); 0.5 sum((y - t)^2) / loss_divisor
// added into a device double; dL/dy into the first scratch block; one layer backward, which reads dL/dy of its output
// there, accumulates (+=) its weight gradients into grad (W2's at + width x inner) and leaves dL/dx of its input
// there.
void load_inputs(cudaStream_t stream, const StackShape& shape, const float* inputs, DeviceActivations& acts);
void forward_layer(cublasHandle_t blas, cudaStream_t stream, const StackShape& shape, int layer, const float* w1,
                   DeviceActivations& acts);
void add_loss(cudaStream_t stream, const StackShape& shape, const float* targets, double loss_divisor,
              DeviceActivations& acts, double* loss);
void loss_gradient(cudaStream_t stream, const StackShape& shape, const float* targets, double loss_divisor,
                   DeviceActivations& acts);
void backward_layer(cublasHandle_t blas, cudaStream_t stream, const StackShape& shape, int layer, const float* w1,
                    DeviceActivations& acts, float* grad);

// The whole stack. forward enqueues load_inputs and every layer; backward enqueues loss_gradient and every layer,
// last first, calling on_layer_ready(layer) on the host right after enqueueing a layer's gradients into
// grad_of_layer(layer): the place to record the layer's "gradient ready" event.
void forward(cublasHandle_t blas, cudaStream_t stream, const StackShape& shape, const LayerWeights& weights,
             const float* inputs, DeviceActivations& acts);
void backward(cublasHandle_t blas, cudaStream_t stream, const StackShape& shape, const LayerWeights& weights,
              const float* targets, double loss_divisor, DeviceActivations& acts,
              const std::function<float*(int layer)>& grad_of_layer,
              const std::function<void(int layer)>& on_layer_ready);

// One block on buffers the caller names, for a forward that keeps only some layers (checkpointing): x and y (rows,
// width), a (rows, inner); the same kernels in the same order as forward_layer and backward_layer, which call them,
// so a layer rebuilt from a checkpoint backpropagates to the same bits. backward_block leaves dL/dx in dx and in dy.
void forward_block(cublasHandle_t blas, cudaStream_t stream, const StackShape& shape, int rows, const float* w1,
                   const float* x, float* a, float* y);
void backward_block(cublasHandle_t blas, cudaStream_t stream, const StackShape& shape, int rows, const float* w1,
                    const float* x, const float* a, float* dy, float* dz, float* dx, float* grad);

// The loss of `elements` outputs y against targets, 0.5 sum((y - t)^2) / loss_divisor, written (not added) into a
// device double by one block in a fixed order: the same bits on every call, unlike add_loss's atomics.
void squared_error_loss(cudaStream_t stream, const float* y, const float* targets, std::int64_t elements,
                        double loss_divisor, double* loss);
// dy = (y - t) / loss_divisor, as loss_gradient writes into the first scratch block.
void squared_error_gradient(cudaStream_t stream, const float* y, const float* targets, std::int64_t elements,
                            double loss_divisor, float* dy);

// Enqueues weights -= learning_rate x grads over `count` elements.
void sgd(cudaStream_t stream, float* weights, const float* grads, float learning_rate, std::int64_t count);

}  // namespace dlsys::training::cuda
