#include "lessons/flash/flash_example.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "kernels/attention/online_softmax.h"
#include "kernels/attention/trace.h"

namespace dlsys {

nlohmann::ordered_json run_flash_worked_example(attention::LoopOrder order) {
  const attention::WorkedExample ex;
  const attention::OnlineSoftmaxRow row = attention::online_softmax_row(ex.scores, ex.values, ex.dv, ex.tile);
  nlohmann::ordered_json m;
  for (std::size_t t = 0; t < row.steps.size(); ++t) {
    const auto& step = row.steps[t];
    const std::string key = fmt::format("example_tile{}_", t + 1);
    m[key + "m_tile"] = step.m_tile;
    m[key + "l_tile"] = step.l_tile;
    m[key + "z_tile_0"] = step.z_tile[0];
    m[key + "z_tile_1"] = step.z_tile[1];
    m[key + "alpha"] = step.alpha;
    m[key + "beta"] = step.beta;
    m[key + "m"] = step.m;
    m[key + "l"] = step.l;
    m[key + "z_0"] = step.z[0];
    m[key + "z_1"] = step.z[1];
  }
  m["example_o_0"] = row.o[0];
  m["example_o_1"] = row.o[1];
  const std::vector<double> w = attention::softmax_weights(ex.scores);
  for (std::size_t j = 0; j < w.size(); ++j) m[fmt::format("example_softmax_w{}", j + 1)] = w[j];
  const std::vector<double> plain = attention::weighted_sum(w, ex.values, ex.dv);
  m["example_plain_o_0"] = plain[0];
  m["example_plain_o_1"] = plain[1];

  // The same numbers from the tiled kernel: row 0 of its single Q block, after each K/V tile.
  const attention::FlashTrace trace = attention::trace_worked_example(order);
  double worst = 0;
  for (std::size_t t = 0; t < trace.tiles.size(); ++t) {
    const attention::TileRecord& rec = trace.tiles[t];
    const attention::TileRowState& s = rec.row_states[0];
    const std::string key = fmt::format("example_kernel_tile{}_", t + 1);
    m[key + "m"] = s.m_new;
    m[key + "l"] = s.l_new;
    m[key + "out_0"] = rec.output[0];
    m[key + "out_1"] = rec.output[1];
    // The kernel holds z (FlashAttention-2) or z / l (Algorithm 1): compare like with like.
    const double to_z = rec.output_normalised ? s.l_new : 1.0;
    for (double diff : {s.m_new - row.steps[t].m, s.l_new - row.steps[t].l, rec.output[0] * to_z - row.steps[t].z[0],
                        rec.output[1] * to_z - row.steps[t].z[1]})
      worst = std::max(worst, std::fabs(diff));
  }
  m["example_kernel_order"] = order == attention::LoopOrder::KvOuter ? "fa1" : "fa2";
  m["example_kernel_output_normalised"] = trace.tiles.front().output_normalised ? 1 : 0;
  m["example_kernel_o_0"] = trace.output[0];
  m["example_kernel_o_1"] = trace.output[1];
  worst = std::max({worst, std::fabs(trace.output[0] - row.o[0]), std::fabs(trace.output[1] - row.o[1])});
  m["example_kernel_max_diff"] = worst;
  return m;
}

std::string format_flash_worked_example(const nlohmann::ordered_json& m) {
  auto v = [&](const std::string& key) { return m.at(key).get<double>(); };
  std::string out =
      "worked example (course T8): one query row, scores [1, 3 | 0, 2] in two tiles;\n"
      "  values v1 = [1, 0], v2 = [0, 2], v3 = [-1, 1], v4 = [3, 1]\n"
      "online softmax, one row in double: after each tile\n";
  out += fmt::format("  {:<5} {:<7} {:>7} {:>11} {:>25} {:>11} {:>11} {:>4} {:>11} {:>25}\n", "tile", "scores",
                     "m_tile", "l_tile", "z_tile", "alpha", "beta", "m", "l", "z");
  const char* scores[] = {"[1, 3]", "[0, 2]"};
  for (int t = 1; t <= 2; ++t) {
    const std::string k = fmt::format("example_tile{}_", t);
    out +=
        fmt::format("  {:<5} {:<7} {:>7.0f} {:>11.8f} {:>25} {:>11.8f} {:>11.8f} {:>4.0f} {:>11.8f} {:>25}\n", t,
                    scores[t - 1], v(k + "m_tile"), v(k + "l_tile"),
                    fmt::format("[{:.8f}, {:.8f}]", v(k + "z_tile_0"), v(k + "z_tile_1")), v(k + "alpha"),
                    v(k + "beta"), v(k + "m"), v(k + "l"), fmt::format("[{:.8f}, {:.8f}]", v(k + "z_0"), v(k + "z_1")));
  }
  out +=
      "  alpha = exp(m_old - m_new) rescales what the row had (0 before the first tile: nothing yet),\n"
      "  beta = exp(m_tile - m_new) rescales the tile\n";
  out += fmt::format("  o = z / l = [{:.8f}, {:.8f}]\n", v("example_o_0"), v("example_o_1"));
  out += fmt::format("plain softmax weights [{:.5f}, {:.5f}, {:.5f}, {:.5f}] give [{:.8f}, {:.8f}]\n",
                     v("example_softmax_w1"), v("example_softmax_w2"), v("example_softmax_w3"), v("example_softmax_w4"),
                     v("example_plain_o_0"), v("example_plain_o_1"));
  const bool normalised = v("example_kernel_output_normalised") != 0;
  out += fmt::format("the tiled kernel v2_flash<double>, order {} ({}), row 0 after each tile:\n",
                     m.at("example_kernel_order").get<std::string>(),
                     normalised ? "Algorithm 1: O_i kept divided by l" : "FlashAttention-2: O_i holds z until the end");
  for (int t = 1; t <= 2; ++t) {
    const std::string k = fmt::format("example_kernel_tile{}_", t);
    out += fmt::format("  tile (0, {})  m = {:.0f}  l = {:.8f}  O_0 = [{:.8f}, {:.8f}]\n", t - 1, v(k + "m"),
                       v(k + "l"), v(k + "out_0"), v(k + "out_1"));
  }
  out += fmt::format("  o = [{:.8f}, {:.8f}]; largest difference from the one-row function: {:.2g}\n",
                     v("example_kernel_o_0"), v("example_kernel_o_1"), v("example_kernel_max_diff"));
  return out;
}

}  // namespace dlsys
