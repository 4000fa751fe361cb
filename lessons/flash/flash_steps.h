#pragma once
// What the flash steps draw before a run: memory against n from the closed forms, the worked example's online
// softmax (by hand and through the real kernel in both loop orders), the effect of adding a constant to every score
// for each whole constant the step offers, and a trace of the real tiled kernel on a problem small enough to show
// every tile, with the main-memory traffic of both kernels.
#include <cstddef>
#include <memory>
#include <vector>

#include "engine/run_result.h"
#include "kernels/attention/online_softmax.h"
#include "kernels/attention/trace.h"
#include "lessons/common/step_data.h"
#include "lessons/flash/flash_params.h"
#include "lessons/flash/flash_values.h"

namespace dlsys::flash {

inline constexpr int kMaxScoreShift = 200;  // the row-max step offers c = 0 .. 200

// The worked example's scores plus c, in fp32 as a kernel would hold them.
struct ShiftedScores {
  std::vector<float> scores, raw_exp, shifted_exp, weights;  // s_j + c, exp(s_j + c), exp(s_j + c - max), softmax
  float naive_weight_of_second = 0;                          // exp(s_2) / sum exp(s_j): NaN once exp overflows
};

// The tile the tiles step opens on, so that the first thing shown is the online softmax at work: the first tile, in
// loop order, where a row's running max moves (alpha < 1 rescales what that row had summed), preferring one where
// another row keeps its max (beta < 1 rescales the tile's own terms). The first K/V block can never show either:
// every row starts from m = -inf there.
struct OpeningTile {
  std::size_t index = 0;                         // into the trace's tiles
  bool rescales = false;                         // false: no tile of this trace moves a running max
  std::vector<std::int64_t> rows_max_moved;      // query rows whose max moves here
  std::vector<std::int64_t> rows_tile_rescaled;  // query rows whose max stays, the tile's terms scaled down
};
OpeningTile find_opening_tile(const attention::FlashTrace& trace);

struct FlashSteps final : StepData {
  std::int64_t n = 0, d = 0;
  double host_free_bytes = 0;
  std::vector<SeriesPoint> scores_bytes, operand_bytes, tile_bytes;  // against n = 256 .. 131072

  attention::WorkedExample example;
  attention::OnlineSoftmaxRow example_row;  // by hand, tile by tile
  std::vector<double> plain_weights, plain_output;
  std::vector<double> kernel_output_fa1, kernel_output_fa2;
  std::vector<ShiftedScores> shifted;  // index c = 0 .. kMaxScoreShift

  attention::FlashTrace tile_trace;                     // the small problem of the tiles step
  std::int64_t tile_grid_rows = 0, tile_grid_cols = 0;  // its Q blocks and K/V blocks
  OpeningTile opening_tile;                             // the tile the step shows first
  attention::Traffic tile_trace_total;                  // its whole run, tiled
  attention::Traffic tile_trace_naive;                  // and standard attention on the same problem
  FlashTheory theory;                                   // traffic at the lesson's n and d, both orders
};

std::shared_ptr<const FlashSteps> make_steps(const FlashParams& params, const FlashTheory& theory);

}  // namespace dlsys::flash
