#pragma once
// mlp_stack.h's forward and backward for one rank on cuBLAS (included by .cu files only): the same math, layer by
// layer, enqueued on the rank's stream through its cuBLAS handle (fp32, cuBLAS's default math: no TF32). Results are
// close to the CPU's, not bit-identical: cuBLAS sums in another order.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>

#include "kernels/training/mlp_stack.h"

namespace dlsys::training::cuda {

// What forward keeps for backward on the device, for `rows` rows: (2 layers + 1) blocks of (rows, width) as in
// Activations (input(l) at block 2l, hidden(l) at 2l + 1, the output at 2 layers), and backward's three scratch
// blocks dy, dz, dx. Pointers into memory the caller owns.
struct DeviceActivations {
  int rows = 0;
  float* storage = nullptr;  // activation_floats(shape, rows)
  float* scratch = nullptr;  // scratch_floats(shape, rows)
};
inline std::int64_t activation_floats(const StackShape& shape, int rows) {
  return std::int64_t(2 * shape.layers + 1) * rows * shape.width;
}
inline std::int64_t scratch_floats(const StackShape& shape, int rows) { return 3ll * rows * shape.width; }

// The pieces, for callers that must act between layers (ZeRO stage 3 all-gathers each layer's weights first):
// inputs into block 0; one layer forward (W1 at w1, W2 at w1 + width^2); 0.5 sum((y - t)^2) / loss_divisor added
// into a device double; dL/dy into the first scratch block; one layer backward, which reads dL/dy of its output
// there, accumulates (+=) its weight gradients into grad (W2's at + width^2) and leaves dL/dx of its input there.
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

// Enqueues weights -= learning_rate x grads over `count` elements.
void sgd(cudaStream_t stream, float* weights, const float* grads, float learning_rate, std::int64_t count);

}  // namespace dlsys::training::cuda
