// The residual MLP stack's data, forward and backward (see mlp_stack.h); each block is the pipeline lessons' block.
#include "kernels/training/mlp_stack.h"

#include <algorithm>
#include <cmath>

#include "kernels/common/seeded_fill.h"
#include "kernels/pipeline/mlp_block.h"

namespace dlsys::training {

std::vector<float> initial_weights(const StackShape& shape, std::uint32_t seed) {
  std::vector<float> weights(std::size_t(parameter_count(shape)));
  fill_seeded_uniform(weights, spread_seed(seed), 0.5f / std::sqrt(float(shape.width)));
  return weights;
}

DataSet make_data_set(const StackShape& shape, int samples, std::uint32_t seed) {
  DataSet data{samples, shape.width, {}, {}};
  data.inputs.resize(std::size_t(samples) * shape.width);
  data.targets.resize(data.inputs.size());
  fill_seeded_uniform(data.inputs, spread_seed(seed + 1));
  fill_seeded_uniform(data.targets, spread_seed(seed + 2));
  return data;
}

Activations::Activations(const StackShape& shape, int rows, float* first_input)
    : shape_(shape),
      rows_(rows),
      first_input_(first_input),
      storage_(std::size_t(shape.layers + (first_input ? 0 : 1)) * rows * shape.width +
               std::size_t(shape.layers) * rows * shape.inner()) {}

float* Activations::input(int layer) {
  if (first_input_ != nullptr) {
    if (layer == 0) return first_input_;
    --layer;
  }
  return storage_.data() + std::size_t(layer) * rows_ * shape_.width;
}
float* Activations::hidden(int layer) {
  const std::size_t inputs = std::size_t(shape_.layers + (first_input_ ? 0 : 1)) * rows_ * shape_.width;
  return storage_.data() + inputs + std::size_t(layer) * rows_ * shape_.inner();
}

LayerWeights flat_weights(const StackShape& shape, const float* weights) {
  return [shape, weights](int layer) { return weights + layer_offset(shape, layer); };
}

void forward_layers(const StackShape& shape, const LayerWeights& weights, Activations& acts) {
  const std::int64_t w1_size = std::int64_t(shape.width) * shape.inner();
  for (int layer = 0; layer < shape.layers; ++layer) {
    const float* w1 = weights(layer);
    pipeline::mlp::forward(acts.rows(), shape.width, shape.inner(), w1, w1 + w1_size, acts.input(layer),
                           acts.hidden(layer), acts.input(layer + 1));
  }
}

double squared_error_loss(const float* y, const float* targets, std::int64_t elements, double loss_divisor) {
  double sum_of_squares = 0;
  for (std::int64_t i = 0; i < elements; ++i) sum_of_squares += double(y[i] - targets[i]) * (y[i] - targets[i]);
  return 0.5 * sum_of_squares / loss_divisor;
}

void squared_error_gradient(const float* y, const float* targets, std::int64_t elements, double loss_divisor,
                            float* dy) {
  const float scale = float(1.0 / loss_divisor);
  for (std::int64_t i = 0; i < elements; ++i) dy[i] = (y[i] - targets[i]) * scale;
}

double forward(const StackShape& shape, const LayerWeights& weights, const float* inputs, const float* targets,
               double loss_divisor, Activations& acts) {
  const std::int64_t elements = std::int64_t(acts.rows()) * shape.width;
  std::copy(inputs, inputs + elements, acts.input(0));
  forward_layers(shape, weights, acts);
  return squared_error_loss(acts.input(shape.layers), targets, elements, loss_divisor);
}

void backward_layers(const StackShape& shape, const LayerWeights& weights, Activations& acts, std::vector<float>& dy,
                     const std::function<float*(int layer)>& grad_of_layer,
                     const std::function<void(int layer)>& on_layer_ready) {
  const int w = shape.width, f = shape.inner(), rows = acts.rows();
  const std::int64_t w1_size = std::int64_t(w) * f;
  std::vector<float> dz(std::size_t(rows) * f), dx(dy.size());
  for (int layer = shape.layers - 1; layer >= 0; --layer) {
    const float* w1 = weights(layer);
    pipeline::mlp::backward_input(rows, w, f, w1, w1 + w1_size, acts.hidden(layer), dy.data(), dz.data(), dx.data());
    float* grad = grad_of_layer(layer);
    pipeline::mlp::backward_weight(rows, w, f, acts.input(layer), acts.hidden(layer), dy.data(), dz.data(), grad,
                                   grad + w1_size);
    on_layer_ready(layer);
    dy.swap(dx);
  }
}

void backward(const StackShape& shape, const LayerWeights& weights, const float* targets, double loss_divisor,
              Activations& acts, const std::function<float*(int layer)>& grad_of_layer,
              const std::function<void(int layer)>& on_layer_ready) {
  std::vector<float> dy(std::size_t(acts.rows()) * shape.width);
  squared_error_gradient(acts.input(shape.layers), targets, std::int64_t(dy.size()), loss_divisor, dy.data());
  backward_layers(shape, weights, acts, dy, grad_of_layer, on_layer_ready);
}

}  // namespace dlsys::training
