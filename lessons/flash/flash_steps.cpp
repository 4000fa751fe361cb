#include "lessons/flash/flash_steps.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "engine/backend.h"

namespace dlsys::flash {

namespace {

constexpr double kBytesPerElement = 4;  // fp32

ShiftedScores shift_scores(const std::vector<double>& scores, float c) {
  ShiftedScores out;
  for (double s : scores) out.scores.push_back(static_cast<float>(s) + c);
  const float max = *std::max_element(out.scores.begin(), out.scores.end());
  float sum_raw = 0, sum_shifted = 0;
  for (float s : out.scores) {
    out.raw_exp.push_back(std::exp(s));
    out.shifted_exp.push_back(std::exp(s - max));
    sum_raw += out.raw_exp.back();
    sum_shifted += out.shifted_exp.back();
  }
  for (float e : out.shifted_exp) out.weights.push_back(e / sum_shifted);
  out.naive_weight_of_second = out.raw_exp[1] / sum_raw;
  return out;
}

// A row's running max moved: it had a finite max before this tile and the merge scaled its old sums down.
bool max_moved(const attention::TileRowState& row) { return row.m_old != -INFINITY && row.alpha < 1; }
// A row kept its max from earlier tiles, so this tile's terms were scaled down to it.
bool tile_rescaled(const attention::TileRowState& row) { return row.m_old != -INFINITY && row.beta < 1; }

OpeningTile describe_tile(const attention::TileRecord& record, std::size_t index) {
  OpeningTile tile{.index = index};
  for (std::size_t r = 0; r < record.row_states.size(); ++r) {
    const std::int64_t row = record.row_begin + std::int64_t(r);
    if (max_moved(record.row_states[r])) tile.rows_max_moved.push_back(row);
    if (tile_rescaled(record.row_states[r])) tile.rows_tile_rescaled.push_back(row);
  }
  tile.rescales = !tile.rows_max_moved.empty();
  return tile;
}

}  // namespace

OpeningTile find_opening_tile(const attention::FlashTrace& trace) {
  std::optional<OpeningTile> first_moved;
  for (std::size_t t = 0; t < trace.tiles.size(); ++t) {
    OpeningTile tile = describe_tile(trace.tiles[t], t);
    if (!tile.rescales) continue;
    if (!tile.rows_tile_rescaled.empty()) return tile;  // both factors at work in one tile
    if (!first_moved) first_moved = std::move(tile);
  }
  return first_moved.value_or(OpeningTile{});
}

std::shared_ptr<const FlashSteps> make_steps(const FlashParams& params, const FlashTheory& theory) {
  auto steps = std::make_shared<FlashSteps>();
  steps->n = params.n;
  steps->d = params.d;
  steps->theory = theory;
  steps->host_free_bytes = double(describe_cpu().memory_free_bytes);
  for (double x = 256; x <= 131072; x *= 2) {
    const double s = x * x * kBytesPerElement, o = 4 * x * double(steps->d) * kBytesPerElement;
    steps->scores_bytes.push_back({x, s, s, s});
    steps->operand_bytes.push_back({x, o, o, o});
    steps->tile_bytes.push_back(
        {x, steps->theory.flash_scratch_bytes, steps->theory.flash_scratch_bytes, steps->theory.flash_scratch_bytes});
  }

  const attention::WorkedExample& ex = steps->example;
  steps->example_row = attention::online_softmax_row(ex.scores, ex.values, ex.dv, ex.tile);
  steps->plain_weights = attention::softmax_weights(ex.scores);
  steps->plain_output = attention::weighted_sum(steps->plain_weights, ex.values, ex.dv);
  steps->kernel_output_fa1 = attention::trace_worked_example(attention::LoopOrder::KvOuter).output;
  steps->kernel_output_fa2 = attention::trace_worked_example(attention::LoopOrder::QOuter).output;
  for (int c = 0; c <= kMaxScoreShift; ++c) steps->shifted.push_back(shift_scores(ex.scores, float(c)));

  const attention::TraceRequest request{
      params.tile_n, params.tile_d, params.causal, {params.tile_br, params.tile_bc}, params.tile_order, 7};
  steps->tile_trace = attention::trace_flash(request);
  const attention::Problem& p = steps->tile_trace.problem;
  steps->tile_grid_rows = attention::row_blocks(p.n, steps->tile_trace.tiling);
  steps->tile_grid_cols = attention::col_blocks(p.n, steps->tile_trace.tiling);
  steps->opening_tile = find_opening_tile(steps->tile_trace);
  steps->tile_trace_total =
      attention::flash_traffic(p.n, p.d, steps->tile_trace.tiling, p.causal, steps->tile_trace.order);
  steps->tile_trace_naive = attention::naive_traffic(p.n, p.d);
  return steps;
}

}  // namespace dlsys::flash
