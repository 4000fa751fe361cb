// A training step of the stack with or without activation checkpointing (see checkpointed_step.h).
#include "kernels/training/checkpointed_step.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "engine/host_buffer.h"
#include "kernels/pipeline/mlp_block.h"

namespace dlsys::training {

namespace {

// Counts an object's bytes in the ledger for as long as it lives (the stack's Activations hold a vector).
class LedgerCharge {
 public:
  LedgerCharge(MemoryLedger& ledger, const char* tag, std::int64_t bytes) : ledger_(ledger), tag_(tag), bytes_(bytes) {
    ledger_.allocate(tag_, bytes_);
  }
  ~LedgerCharge() { ledger_.release(tag_, bytes_); }
  LedgerCharge(const LedgerCharge&) = delete;
  LedgerCharge& operator=(const LedgerCharge&) = delete;

 private:
  MemoryLedger& ledger_;
  const char* tag_;
  std::int64_t bytes_;
};

double keep_everything_step(const StackShape& shape, const float* weights, const float* inputs, const float* targets,
                            int rows, MemoryLedger& ledger, float* gradients) {
  Activations acts(shape, rows);
  const LedgerCharge charge(ledger, kActivationTag, acts.bytes());
  const double loss = forward(shape, flat_weights(shape, weights), inputs, targets, rows, acts);
  backward(
      shape, flat_weights(shape, weights), targets, rows, acts,
      [&](int layer) { return gradients + layer_offset(shape, layer); }, [](int) {});
  return loss;
}

double checkpointed_step(const StackShape& shape, const float* weights, const float* inputs, const float* targets,
                         int rows, int k, MemoryLedger& ledger, float* gradients) {
  const int segments = shape.layers / k;
  const std::size_t elements = std::size_t(rows) * shape.width;
  const std::int64_t w1_size = std::int64_t(shape.width) * shape.inner();
  // Forward: one layer at a time through two working buffers, keeping each segment's input and the output.
  std::vector<HostBuffer<float>> boundaries;
  boundaries.reserve(std::size_t(segments));
  boundaries.emplace_back(ledger, kActivationTag, elements);
  std::copy(inputs, inputs + elements, boundaries[0].data());
  HostBuffer<float> output(ledger, kActivationTag, elements);
  {
    HostBuffer<float> hidden(ledger, kWorkspaceTag, std::size_t(rows) * shape.inner());
    HostBuffer<float> ping(ledger, kWorkspaceTag, elements), pong(ledger, kWorkspaceTag, elements);
    const float* x = boundaries[0].data();
    for (int layer = 0; layer < shape.layers; ++layer) {
      float* y = nullptr;
      if (layer + 1 == shape.layers) {
        y = output.data();
      } else if ((layer + 1) % k == 0) {
        boundaries.emplace_back(ledger, kActivationTag, elements);
        y = boundaries.back().data();
      } else {
        y = x == ping.data() ? pong.data() : ping.data();
      }
      const float* w1 = weights + layer_offset(shape, layer);
      pipeline::mlp::forward(rows, shape.width, shape.inner(), w1, w1 + w1_size, x, hidden.data(), y);
      x = y;
    }
  }
  const double loss = squared_error_loss(output.data(), targets, std::int64_t(elements), rows);
  std::vector<float> dy(elements);
  squared_error_gradient(output.data(), targets, std::int64_t(elements), rows, dy.data());
  output = HostBuffer<float>();  // released: the loss's gradient replaces it
  // Backward: rebuild each segment from its boundary, then backpropagate through it; then drop both.
  const StackShape segment{.layers = k, .width = shape.width, .expansion = shape.expansion};
  for (int s = segments - 1; s >= 0; --s) {
    const int first_layer = s * k;
    const LayerWeights segment_weights = [&](int layer) { return weights + layer_offset(shape, first_layer + layer); };
    {
      Activations acts(segment, rows, boundaries[std::size_t(s)].data());
      const LedgerCharge charge(ledger, kActivationTag, acts.bytes());
      forward_layers(segment, segment_weights, acts);
      backward_layers(
          segment, segment_weights, acts, dy,
          [&](int layer) { return gradients + layer_offset(shape, first_layer + layer); }, [](int) {});
    }
    boundaries[std::size_t(s)] = HostBuffer<float>();
  }
  return loss;
}

}  // namespace

std::int64_t step_activation_peak_bytes(const StackShape& shape, int rows, int segment_layers) {
  const std::int64_t boundary = std::int64_t(sizeof(float)) * rows * shape.width;
  const std::int64_t layer = boundary * (1 + shape.expansion);
  if (segment_layers == kKeepEverything) return shape.layers * layer + boundary;
  return (shape.layers / segment_layers) * boundary + segment_layers * layer;
}

double train_step(const StackShape& shape, const float* weights, const float* inputs, const float* targets, int rows,
                  int segment_layers, MemoryLedger& ledger, float* gradients) {
  if (segment_layers < 0 || segment_layers > shape.layers || (segment_layers > 0 && shape.layers % segment_layers != 0))
    throw std::invalid_argument("train_step: segment_layers must be 0 or divide the layers");
  std::fill(gradients, gradients + parameter_count(shape), 0.0f);
  if (segment_layers == kKeepEverything)
    return keep_everything_step(shape, weights, inputs, targets, rows, ledger, gradients);
  return checkpointed_step(shape, weights, inputs, targets, rows, segment_layers, ledger, gradients);
}

}  // namespace dlsys::training
