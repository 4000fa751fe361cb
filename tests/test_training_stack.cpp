// The data-parallel lessons' model: its gradients against finite differences, and the batch-split identity
// data parallelism rests on (the shards' gradients summed equal the whole batch's).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "kernels/training/mlp_stack.h"

using namespace dlsys::training;

namespace {

std::vector<float> gradients(const StackShape& shape, const std::vector<float>& weights, const DataSet& data,
                             int first_row, int rows, double loss_divisor, std::vector<int>* ready_order = nullptr) {
  std::vector<float> grads(weights.size(), 0.0f);
  Activations acts(shape, rows);
  forward(shape, flat_weights(shape, weights.data()), data.input_rows(first_row), data.target_rows(first_row),
          loss_divisor, acts);
  backward(
      shape, flat_weights(shape, weights.data()), data.target_rows(first_row), loss_divisor, acts,
      [&](int layer) { return grads.data() + layer_offset(shape, layer); },
      [&](int layer) {
        if (ready_order) ready_order->push_back(layer);
      });
  return grads;
}

double loss(const StackShape& shape, const std::vector<float>& weights, const DataSet& data) {
  Activations acts(shape, data.samples);
  return forward(shape, flat_weights(shape, weights.data()), data.input_rows(0), data.target_rows(0), data.samples,
                 acts);
}

}  // namespace

TEST_CASE("the stack's gradients match central differences of its loss") {
  const StackShape shape{3, 8};
  const DataSet data = make_data_set(shape, 6, 7);
  std::vector<float> weights = initial_weights(shape, 3);
  std::vector<int> order;
  const std::vector<float> grads = gradients(shape, weights, data, 0, data.samples, data.samples, &order);
  CHECK(order == std::vector<int>{2, 1, 0});
  for (std::int64_t index : {std::int64_t(0), std::int64_t(70), std::int64_t(130), parameter_count(shape) - 1}) {
    const float saved = weights[std::size_t(index)];
    const float step = 1e-2f;
    weights[std::size_t(index)] = saved + step;
    const double up = loss(shape, weights, data);
    weights[std::size_t(index)] = saved - step;
    const double down = loss(shape, weights, data);
    weights[std::size_t(index)] = saved;
    CHECK(grads[std::size_t(index)] == doctest::Approx((up - down) / (2 * step)).epsilon(2e-2));
  }
}

TEST_CASE("shards of the batch, each divided by the whole batch, sum to the whole batch's gradient") {
  const StackShape shape{2, 16};
  const DataSet data = make_data_set(shape, 10, 1);
  const std::vector<float> weights = initial_weights(shape, 1);
  const std::vector<float> whole = gradients(shape, weights, data, 0, 10, 10);
  std::vector<float> summed(whole.size(), 0.0f);
  for (int rank = 0; rank < 5; ++rank) {
    const std::vector<float> part = gradients(shape, weights, data, 2 * rank, 2, 10);
    for (std::size_t i = 0; i < summed.size(); ++i) summed[i] += part[i];
  }
  double max_error = 0, max_value = 0;
  for (std::size_t i = 0; i < whole.size(); ++i) {
    max_error = std::max(max_error, double(std::fabs(summed[i] - whole[i])));
    max_value = std::max(max_value, double(std::fabs(whole[i])));
  }
  CHECK(max_value > 0);
  CHECK(max_error <= 1e-5 * max_value);
}
