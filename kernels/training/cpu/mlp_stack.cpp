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

Activations::Activations(const StackShape& shape, int rows)
    : shape_(shape), rows_(rows), storage_(std::size_t(2 * shape.layers + 1) * rows * shape.width) {}

float* Activations::input(int layer) { return storage_.data() + std::size_t(2 * layer) * rows_ * shape_.width; }
float* Activations::hidden(int layer) { return storage_.data() + std::size_t(2 * layer + 1) * rows_ * shape_.width; }

LayerWeights flat_weights(const StackShape& shape, const float* weights) {
  return [shape, weights](int layer) { return weights + layer_offset(shape, layer); };
}

double forward(const StackShape& shape, const LayerWeights& weights, const float* inputs, const float* targets,
               double loss_divisor, Activations& acts) {
  const int w = shape.width, rows = acts.rows();
  const std::int64_t square = std::int64_t(w) * w;
  std::copy(inputs, inputs + std::int64_t(rows) * w, acts.input(0));
  for (int layer = 0; layer < shape.layers; ++layer) {
    const float* w1 = weights(layer);
    pipeline::mlp::forward(rows, w, w1, w1 + square, acts.input(layer), acts.hidden(layer), acts.input(layer + 1));
  }
  const float* y = acts.input(shape.layers);
  double sum_of_squares = 0;
  for (std::int64_t i = 0; i < std::int64_t(rows) * w; ++i)
    sum_of_squares += double(y[i] - targets[i]) * (y[i] - targets[i]);
  return 0.5 * sum_of_squares / loss_divisor;
}

void backward(const StackShape& shape, const LayerWeights& weights, const float* targets, double loss_divisor,
              Activations& acts, const std::function<float*(int layer)>& grad_of_layer,
              const std::function<void(int layer)>& on_layer_ready) {
  const int w = shape.width, rows = acts.rows();
  const std::int64_t square = std::int64_t(w) * w, elements = std::int64_t(rows) * w;
  std::vector<float> dy(static_cast<std::size_t>(elements)), dz(dy.size()), dx(dy.size());
  const float* y = acts.input(shape.layers);
  const float scale = float(1.0 / loss_divisor);
  for (std::int64_t i = 0; i < elements; ++i) dy[std::size_t(i)] = (y[i] - targets[i]) * scale;
  for (int layer = shape.layers - 1; layer >= 0; --layer) {
    const float* w1 = weights(layer);
    pipeline::mlp::backward_input(rows, w, w1, w1 + square, acts.hidden(layer), dy.data(), dz.data(), dx.data());
    float* grad = grad_of_layer(layer);
    pipeline::mlp::backward_weight(rows, w, acts.input(layer), acts.hidden(layer), dy.data(), dz.data(), grad,
                                   grad + square);
    on_layer_ready(layer);
    dy.swap(dx);
  }
}

}  // namespace dlsys::training
