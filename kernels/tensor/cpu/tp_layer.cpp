#include "kernels/tensor/tp_layer.h"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "engine/address_space.h"
#include "kernels/tensor/shard_fill.h"

namespace dlsys::tensor {

SingleThreadedBlas::SingleThreadedBlas(int rank_threads) : saved_(openblas_get_num_threads()) {
  if (rank_threads > 0)
    require_address_space(0, rank_threads, fmt::format("{} rank threads calling OpenBLAS", rank_threads));
  openblas_set_num_threads(1);
}
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
using ElementMap = std::function<void(const RankResults&, const std::function<void(float, std::int64_t)>&)>;

TensorError error_of(const std::string& key, const std::string& name, const std::vector<RankResults>& ranks,
                     const double* reference, std::int64_t reference_count, const ElementMap& each) {
  double largest = 0, worst = 0;
  for (std::int64_t i = 0; i < reference_count; ++i) largest = std::max(largest, std::abs(reference[i]));
  for (const RankResults& rank : ranks)
    each(rank, [&](float value, std::int64_t i) {
      // A NaN (a value never computed) must not pass: max() would drop it.
      const double gap = std::abs(double(value) - reference[i]);
      worst = std::isnan(gap) ? gap : std::max(worst, gap);
    });
  return {key, name, largest > 0 ? worst / largest : worst};
}

}  // namespace

RankResults results_of(const RankLayer<float>& rank) {
  return {.rank = rank.rank(),
          .output = rank.output(),
          .input_gradient = rank.input_gradient(),
          .grad_wqkv = rank.grad_wqkv(),
          .grad_wo = rank.grad_wo(),
          .grad_w1 = rank.grad_w1(),
          .grad_w2 = rank.grad_w2(),
          .grad_norms = rank.grad_norms()};
}

std::vector<TensorError> compare_with_reference(const LayerShape& s, const std::vector<RankResults>& ranks,
                                                const RankLayer<double>& reference) {
  const std::int64_t h = s.hidden, n = s.tokens(), hl = s.hidden_per_rank(), f = s.ffn_per_rank();
  auto rows = [&](const float* RankResults::*values) -> ElementMap {
    return [=](const RankResults& rank, const std::function<void(float, std::int64_t)>& visit) {
      const float* v = rank.*values;
      const std::int64_t first = s.first_local_token(rank.rank) * h;
      for (std::int64_t i = 0; i < s.local_tokens() * h; ++i) visit(v[i], first + i);
    };
  };
  std::vector<TensorError> errors;
  errors.push_back(error_of("output", "output", ranks, reference.output(), n * h, rows(&RankResults::output)));
  errors.push_back(error_of("input_gradient", "input gradient", ranks, reference.input_gradient(), n * h,
                            rows(&RankResults::input_gradient)));
  errors.push_back(
      error_of("dw_qkv", "dW_qkv", ranks, reference.grad_wqkv(), h * 3 * h, [&](const auto& rank, const auto& visit) {
        for (std::int64_t i = 0; i < h; ++i)
          for (std::int64_t j = 0; j < 3 * hl; ++j)
            visit(rank.grad_wqkv[i * 3 * hl + j], i * 3 * h + wqkv_global_column(s, rank.rank, j));
      }));
  errors.push_back(
      error_of("dw_o", "dW_o", ranks, reference.grad_wo(), h * h, [&](const auto& rank, const auto& visit) {
        for (std::int64_t i = 0; i < hl * h; ++i) visit(rank.grad_wo[i], rank.rank * hl * h + i);
      }));
  errors.push_back(
      error_of("dw_1", "dW_1", ranks, reference.grad_w1(), h * 4 * h, [&](const auto& rank, const auto& visit) {
        for (std::int64_t i = 0; i < h; ++i)
          for (std::int64_t j = 0; j < f; ++j) visit(rank.grad_w1[i * f + j], i * 4 * h + rank.rank * f + j);
      }));
  errors.push_back(
      error_of("dw_2", "dW_2", ranks, reference.grad_w2(), 4 * h * h, [&](const auto& rank, const auto& visit) {
        for (std::int64_t i = 0; i < f * h; ++i) visit(rank.grad_w2[i], rank.rank * f * h + i);
      }));
  errors.push_back(error_of("norms", "layer-norm gains and biases", ranks, reference.grad_norms(), 4 * h,
                            [&](const auto& rank, const auto& visit) {
                              for (std::int64_t i = 0; i < 4 * h; ++i) visit(rank.grad_norms[i], i);
                            }));
  return errors;
}

RankLayer<double> stepped_reference_layer(const LayerShape& shape, MemoryLedger& ledger) {
  LayerShape unsharded = shape;
  unsharded.ranks = 1;
  unsharded.sequence_parallel = false;
  RankLayer<double> reference(unsharded, 0, ledger, " (reference)", nullptr);
  reference.step();
  return reference;
}

std::vector<TensorError> compare_with_reference(const TensorParallelLayer& layer, const RankLayer<double>& reference) {
  std::vector<RankResults> ranks;
  for (int r = 0; r < layer.shape().ranks; ++r) ranks.push_back(results_of(layer.rank(r)));
  return compare_with_reference(layer.shape(), ranks, reference);
}

}  // namespace dlsys::tensor
