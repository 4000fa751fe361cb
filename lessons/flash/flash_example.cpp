#include "lessons/flash/flash_example.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "kernels/attention/online_softmax.h"
#include "kernels/attention/trace.h"

namespace dlsys {

flash::FlashWorkedExample run_flash_worked_example(attention::LoopOrder order) {
  const attention::WorkedExample ex;
  flash::FlashWorkedExample e;
  e.row = attention::online_softmax_row(ex.scores, ex.values, ex.dv, ex.tile);
  e.softmax_weights = attention::softmax_weights(ex.scores);
  e.plain_output = attention::weighted_sum(e.softmax_weights, ex.values, ex.dv);

  // The same numbers from the tiled kernel: row 0 of its single Q block, after each K/V tile.
  const attention::FlashTrace trace = attention::trace_worked_example(order);
  double worst = 0;
  for (std::size_t t = 0; t < trace.tiles.size(); ++t) {
    const attention::TileRecord& rec = trace.tiles[t];
    const attention::TileRowState& s = rec.row_states[0];
    const attention::OnlineSoftmaxStep& by_hand = e.row.steps[t];
    e.kernel_tiles.push_back({s.m_new, s.l_new, {rec.output[0], rec.output[1]}});
    // The kernel holds z (FlashAttention-2) or z / l (Algorithm 1): compare like with like.
    const double to_z = rec.output_normalised ? s.l_new : 1.0;
    for (double diff : {s.m_new - by_hand.m, s.l_new - by_hand.l, rec.output[0] * to_z - by_hand.z[0],
                        rec.output[1] * to_z - by_hand.z[1]})
      worst = std::max(worst, std::fabs(diff));
  }
  e.kernel_order = order == attention::LoopOrder::KvOuter ? "fa1" : "fa2";
  e.kernel_output_normalised = trace.tiles.front().output_normalised;
  e.kernel_output = {trace.output[0], trace.output[1]};
  e.kernel_max_diff =
      std::max({worst, std::fabs(trace.output[0] - e.row.o[0]), std::fabs(trace.output[1] - e.row.o[1])});
  return e;
}

std::string format_flash_worked_example(const flash::FlashWorkedExample& e) {
  std::string out =
      "worked example (course T8): one query row, scores [1, 3 | 0, 2] in two tiles;\n"
      "  values v1 = [1, 0], v2 = [0, 2], v3 = [-1, 1], v4 = [3, 1]\n"
      "online softmax, one row in double: after each tile\n";
  out += fmt::format("  {:<5} {:<7} {:>7} {:>11} {:>25} {:>11} {:>11} {:>4} {:>11} {:>25}\n", "tile", "scores",
                     "m_tile", "l_tile", "z_tile", "alpha", "beta", "m", "l", "z");
  const char* scores[] = {"[1, 3]", "[0, 2]"};
  for (std::size_t t = 0; t < e.row.steps.size() && t < 2; ++t) {
    const attention::OnlineSoftmaxStep& s = e.row.steps[t];
    out += fmt::format("  {:<5} {:<7} {:>7.0f} {:>11.8f} {:>25} {:>11.8f} {:>11.8f} {:>4.0f} {:>11.8f} {:>25}\n", t + 1,
                       scores[t], s.m_tile, s.l_tile, fmt::format("[{:.8f}, {:.8f}]", s.z_tile[0], s.z_tile[1]),
                       s.alpha, s.beta, s.m, s.l, fmt::format("[{:.8f}, {:.8f}]", s.z[0], s.z[1]));
  }
  out +=
      "  alpha = exp(m_old - m_new) rescales what the row had (0 before the first tile: nothing yet),\n"
      "  beta = exp(m_tile - m_new) rescales the tile\n";
  out += fmt::format("  o = z / l = [{:.8f}, {:.8f}]\n", e.row.o[0], e.row.o[1]);
  const auto& w = e.softmax_weights;
  out += fmt::format("plain softmax weights [{:.5f}, {:.5f}, {:.5f}, {:.5f}] give [{:.8f}, {:.8f}]\n", w[0], w[1], w[2],
                     w[3], e.plain_output[0], e.plain_output[1]);
  out += fmt::format("the tiled kernel v2_flash<double>, order {} ({}), row 0 after each tile:\n", e.kernel_order,
                     e.kernel_output_normalised ? "Algorithm 1: O_i kept divided by l"
                                                : "FlashAttention-2: O_i holds z until the end");
  for (std::size_t t = 0; t < e.kernel_tiles.size(); ++t) {
    const flash::KernelTileState& k = e.kernel_tiles[t];
    out += fmt::format("  tile (0, {})  m = {:.0f}  l = {:.8f}  O_0 = [{:.8f}, {:.8f}]\n", t, k.m, k.l, k.out[0],
                       k.out[1]);
  }
  out += fmt::format("  o = [{:.8f}, {:.8f}]; largest difference from the one-row function: {:.2g}\n",
                     e.kernel_output[0], e.kernel_output[1], e.kernel_max_diff);
  return out;
}

}  // namespace dlsys
