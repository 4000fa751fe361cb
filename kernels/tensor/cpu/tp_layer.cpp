#include "kernels/tensor/tp_layer.h"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

namespace dlsys::tensor {

SingleThreadedBlas::SingleThreadedBlas() : saved_(openblas_get_num_threads()) { openblas_set_num_threads(1); }
SingleThreadedBlas::~SingleThreadedBlas() { openblas_set_num_threads(saved_); }

TensorParallelLayer::TensorParallelLayer(const LayerShape& shape, MemoryLedger& ledger)
    : shape_(shape), group_(shape.ranks, ledger) {
  for (int r = 0; r < shape.ranks; ++r)
    ranks_.push_back(std::make_unique<RankLayer<float>>(shape, r, ledger, fmt::format(" rank {}", r), &group_));
}

std::vector<RankStepTimes> TensorParallelLayer::step() {
  std::vector<RankStepTimes> times(ranks_.size());
  group_.run([&](int r) { times[static_cast<std::size_t>(r)] = ranks_[static_cast<std::size_t>(r)]->step(); });
  return times;
}

namespace {

// Walks every element a rank holds of one tensor: visit(rank value, index of the same element in the reference).
using ElementMap = std::function<void(const RankLayer<float>&, const std::function<void(float, std::int64_t)>&)>;

TensorError error_of(const std::string& key, const std::string& name, const TensorParallelLayer& layer,
                     const double* reference, std::int64_t reference_count, const ElementMap& each) {
  double largest = 0, worst = 0;
  for (std::int64_t i = 0; i < reference_count; ++i) largest = std::max(largest, std::abs(reference[i]));
  for (int r = 0; r < layer.shape().ranks; ++r)
    each(layer.rank(r), [&](float value, std::int64_t i) { worst = std::max(worst, std::abs(value - reference[i])); });
  return {key, name, largest > 0 ? worst / largest : worst};
}

}  // namespace

std::vector<TensorError> compare_with_reference(const TensorParallelLayer& layer, const RankLayer<double>& reference) {
  const LayerShape& s = layer.shape();
  const std::int64_t h = s.hidden, n = s.tokens(), hl = s.hidden_per_rank(), f = s.ffn_per_rank();
  auto rows = [&](const float* (RankLayer<float>::*values)() const) -> ElementMap {
    return [=](const RankLayer<float>& rank, const std::function<void(float, std::int64_t)>& visit) {
      const float* v = (rank.*values)();
      const std::int64_t first = s.first_local_token(rank.rank()) * h;
      for (std::int64_t i = 0; i < s.local_tokens() * h; ++i) visit(v[i], first + i);
    };
  };
  std::vector<TensorError> errors;
  errors.push_back(error_of("output", "output", layer, reference.output(), n * h, rows(&RankLayer<float>::output)));
  errors.push_back(error_of("input_gradient", "input gradient", layer, reference.input_gradient(), n * h,
                            rows(&RankLayer<float>::input_gradient)));
  errors.push_back(
      error_of("dw_qkv", "dW_qkv", layer, reference.grad_wqkv(), h * 3 * h, [&](const auto& rank, const auto& visit) {
        for (std::int64_t i = 0; i < h; ++i)
          for (std::int64_t j = 0; j < 3 * hl; ++j)
            visit(rank.grad_wqkv()[i * 3 * hl + j], i * 3 * h + (j / hl) * h + rank.rank() * hl + j % hl);
      }));
  errors.push_back(
      error_of("dw_o", "dW_o", layer, reference.grad_wo(), h * h, [&](const auto& rank, const auto& visit) {
        for (std::int64_t i = 0; i < hl * h; ++i) visit(rank.grad_wo()[i], rank.rank() * hl * h + i);
      }));
  errors.push_back(
      error_of("dw_1", "dW_1", layer, reference.grad_w1(), h * 4 * h, [&](const auto& rank, const auto& visit) {
        for (std::int64_t i = 0; i < h; ++i)
          for (std::int64_t j = 0; j < f; ++j) visit(rank.grad_w1()[i * f + j], i * 4 * h + rank.rank() * f + j);
      }));
  errors.push_back(
      error_of("dw_2", "dW_2", layer, reference.grad_w2(), 4 * h * h, [&](const auto& rank, const auto& visit) {
        for (std::int64_t i = 0; i < f * h; ++i) visit(rank.grad_w2()[i], rank.rank() * f * h + i);
      }));
  errors.push_back(error_of("norms", "layer-norm gains and biases", layer, reference.grad_norms(), 4 * h,
                            [&](const auto& rank, const auto& visit) {
                              for (std::int64_t i = 0; i < 4 * h; ++i) visit(rank.grad_norms()[i], i);
                            }));
  return errors;
}

}  // namespace dlsys::tensor
