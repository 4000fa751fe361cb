#pragma once
// The model the data-parallel and checkpointing lessons train: a stack of residual MLP blocks (the pipeline lessons'
// block, y = x + relu(x W1) W2, no biases), fp32 on OpenBLAS, with a mean-squared-error loss against seeded
// targets. Small enough to train in a moment, deep enough that gradients become ready layer by layer. The block is
// square (width -> width -> width) unless `expansion` widens its middle, as the course's 1024 -> 4096 -> 1024 block.
//
// All weights live in one flat vector, layer after layer, W1 then W2 of each: a gradient bucket or a ZeRO shard is a
// contiguous range of it, as in PyTorch's flattened buckets and FSDP's flat parameters.
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace dlsys::training {

struct StackShape {
  int layers = 4;
  int width = 256;
  int expansion = 1;  // the hidden layer is expansion x width wide
  constexpr int inner() const { return expansion * width; }
};

// W1 (width, inner) and W2 (inner, width).
constexpr std::int64_t parameters_per_layer(const StackShape& shape) {
  return 2 * std::int64_t(shape.width) * shape.inner();
}
constexpr std::int64_t parameter_count(const StackShape& shape) { return shape.layers * parameters_per_layer(shape); }
// Where layer `layer`'s W1 starts in the flat vector; its W2 follows at + width x inner.
constexpr std::int64_t layer_offset(const StackShape& shape, int layer) { return layer * parameters_per_layer(shape); }

// Seeded initial weights, U(-1, 1) x 0.5 / sqrt(width): the residual stream stays of order one through the stack.
std::vector<float> initial_weights(const StackShape& shape, std::uint32_t seed);

// A seeded regression data set: `samples` rows of inputs and targets, each (samples, width), row-major.
struct DataSet {
  int samples = 0;
  int width = 0;
  std::vector<float> inputs;
  std::vector<float> targets;
  const float* input_rows(int first_row) const { return inputs.data() + std::int64_t(first_row) * width; }
  const float* target_rows(int first_row) const { return targets.data() + std::int64_t(first_row) * width; }
};
DataSet make_data_set(const StackShape& shape, int samples, std::uint32_t seed);

// What forward keeps for backward, for `rows` rows: each layer's input x and hidden activation a, and the output.
// Given `first_input`, the first layer reads that buffer (a checkpoint kept elsewhere) instead of a copy of its own.
class Activations {
 public:
  Activations(const StackShape& shape, int rows, float* first_input = nullptr);
  int rows() const { return rows_; }
  // What this object holds: (layers + 1) inputs of (rows, width) and layers hidden activations of (rows, inner), one
  // input fewer with first_input.
  std::int64_t bytes() const { return std::int64_t(sizeof(float)) * storage_.size(); }
  float* input(int layer);   // (rows, width); input(layers) is the stack's output
  float* hidden(int layer);  // (rows, inner), after the ReLU

 private:
  StackShape shape_;
  int rows_;
  float* first_input_;
  std::vector<float> storage_;
};

// Reads layer `layer`'s W1 (W2 follows at + width^2). A plain flat vector returns a pointer into itself; ZeRO stage 3
// returns the layer it has just all-gathered.
using LayerWeights = std::function<const float*(int layer)>;
LayerWeights flat_weights(const StackShape& shape, const float* weights);

// The layers' forward over acts.input(0), keeping what backward needs in `acts`.
void forward_layers(const StackShape& shape, const LayerWeights& weights, Activations& acts);
// The layers' backward, last first: `dy` (rows, width) holds the gradient of acts.input(layers) and leaves holding that
// of acts.input(0). Gradients accumulate as in `backward`.
void backward_layers(const StackShape& shape, const LayerWeights& weights, Activations& acts, std::vector<float>& dy,
                     const std::function<float*(int layer)>& grad_of_layer,
                     const std::function<void(int layer)>& on_layer_ready);

// The loss 0.5 x sum((y - t)^2) / loss_divisor of `elements` outputs, and its gradient (y - t) / loss_divisor.
double squared_error_loss(const float* y, const float* targets, std::int64_t elements, double loss_divisor);
void squared_error_gradient(const float* y, const float* targets, std::int64_t elements, double loss_divisor,
                            float* dy);

// Forward over `rows` rows of `inputs`; returns the loss 0.5 x sum((y - t)^2) / loss_divisor. With loss_divisor the
// global batch's rows, each rank's gradients summed over ranks equal the full batch's: what data parallelism needs.
double forward(const StackShape& shape, const LayerWeights& weights, const float* inputs, const float* targets,
               double loss_divisor, Activations& acts);

// Backward, last layer first. Accumulates (+=) each layer's gradients into `grad_of_layer(layer)` (W1's gradient, W2's
// at + width x inner) and then calls `on_layer_ready(layer)`: the moment a data-parallel rank may start reducing it.
void backward(const StackShape& shape, const LayerWeights& weights, const float* targets, double loss_divisor,
              Activations& acts, const std::function<float*(int layer)>& grad_of_layer,
              const std::function<void(int layer)>& on_layer_ready);

}  // namespace dlsys::training
