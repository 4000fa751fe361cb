// Views of the flash lesson: the n x n score matrix as a memory bar, why the row max can be subtracted, the online
// softmax on the course's worked example, the tile grid of the real tiled kernel in either loop order with each tile's
// per-row m and l, and the measured time, memory and error against n.
// Steps 3 and 4 draw numbers recorded by the tiled kernel's trace hook (kernels/attention/trace.h), not a re-enactment.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <tuple>

#include "app/gui/plot.h"
#include "app/gui/theme.h"
#include "app/views/view.h"
#include "engine/backend.h"
#include "engine/units.h"
#include "lessons/flash/flash_lesson.h"
#include "lessons/flash/flash_steps.h"
#include "lessons/flash/flash_values.h"

namespace dlsys::gui {

namespace {

using attention::LoopOrder;
using Rows = std::vector<std::pair<std::string, std::string>>;

constexpr double kBytesPerElement = 4;               // fp32
constexpr double kBarFullScaleN = 16384;             // the memory bar is full width when S is 16384 x 16384 (1 GiB)
constexpr double kSecondsPerTile = kAnimationTickS;  // tile-grid animation
constexpr double kSecondsPerExampleStage = 2.0;      // worked example: after tile 1, after tile 2, o = z / l

std::string fixed(double value, int decimals = 8) {
  if (value == -INFINITY) return "-inf";
  if (std::isinf(value)) return "inf";
  if (std::isnan(value)) return "NaN";
  return fmt::format("{:.{}f}", value, decimals);
}

std::string vec2(const std::vector<double>& v) { return fmt::format("[{}, {}]", fixed(v[0]), fixed(v[1])); }

std::string row_list(const std::vector<std::int64_t>& rows) {
  std::string out;
  for (std::size_t r = 0; r < rows.size(); ++r)
    out += (r == 0 ? "" : r + 1 == rows.size() ? " and " : ", ") + std::to_string(rows[r]);
  return out;
}

// Relative luminance (WCAG 2) of a colour, for picking text that stays legible on a filled cell.
double luminance(ImU32 color) {
  auto channel = [&](int shift) {
    const double c = double((color >> shift) & 0xFF) / 255.0;
    return c <= 0.03928 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
  };
  return 0.2126 * channel(IM_COL32_R_SHIFT) + 0.7152 * channel(IM_COL32_G_SHIFT) + 0.0722 * channel(IM_COL32_B_SHIFT);
}

// Of the theme's two extremes (theory lines and panels), the one that contrasts most with `fill`: dark text on the
// amber highlight of the desk theme, near-black on the orange of the projector theme.
ImU32 text_on(ImU32 fill) {
  auto contrast = [&](ImU32 text) {
    const double a = luminance(fill) + 0.05, b = luminance(text) + 0.05;
    return a > b ? a / b : b / a;
  };
  return contrast(theory_color()) >= contrast(panel_color()) ? theory_color() : panel_color();
}

// The number a step is about, in the current table cell: the cell filled with the theme's highlight, the text in the
// colour that reads best on it, in both themes.
void highlighted_cell_text(const std::string& text) {
  ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg, highlight_color());
  ImGui::PushStyleColor(ImGuiCol_Text, text_on(highlight_color()));
  ImGui::TextUnformatted(text.c_str());
  ImGui::PopStyleColor();
}

// A swatch of the highlight followed by what it marks, as a one-line key under a table.
void highlight_key(const std::string& sample, const std::string& meaning) {
  const float s = ui_scale();
  const ImVec2 size = ImGui::CalcTextSize(sample.c_str());
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float pad = 4 * s;
  ImDrawList* draw = ImGui::GetWindowDrawList();
  draw->AddRectFilled({o.x, o.y}, {o.x + size.x + 2 * pad, o.y + size.y}, highlight_color(), 2 * s);
  draw->AddText({o.x + pad, o.y}, text_on(highlight_color()), sample.c_str());
  ImGui::Dummy({size.x + 2 * pad, size.y});
  ImGui::SameLine();
  ImGui::TextWrapped("%s", meaning.c_str());
}

// A horizontal bar: `fraction` of the full width, labelled on its right.
void draw_bar(const char* label, double fraction, ImU32 color, const std::string& value) {
  const float s = ui_scale();
  const float label_w = 260 * s, full_w = std::max(100.0f, ImGui::GetContentRegionAvail().x - label_w - 180 * s);
  const float h = ImGui::GetTextLineHeight() + 6 * s;
  ImGui::TextUnformatted(label);
  ImGui::SameLine(label_w);
  const ImVec2 o = ImGui::GetCursorScreenPos();
  ImDrawList* draw = ImGui::GetWindowDrawList();
  draw->AddRectFilled(o, {o.x + full_w, o.y + h}, with_alpha(muted_text_color(), 0.15f), 3 * s);
  const float w = static_cast<float>(std::clamp(fraction, 0.0, 1.0)) * full_w;
  draw->AddRectFilled(o, {o.x + std::max(w, 2 * s), o.y + h}, color, 3 * s);
  if (fraction > 1) draw->AddText({o.x + full_w - 30 * s, o.y + 2 * s}, text_color(), ">>");
  draw->AddText({o.x + full_w + 10 * s, o.y + 2 * s}, text_color(), value.c_str());
  ImGui::Dummy({full_w + 170 * s, h + 4 * s});
}

void draw_memory_step(const ViewContext& ctx) {
  const flash::FlashSteps* steps = step_data_as<flash::FlashSteps>(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const std::int64_t n = steps->n, d = steps->d;
  const double s_bytes = double(n) * double(n) * kBytesPerElement;
  const double qkvo_bytes = 4.0 * double(n) * double(d) * kBytesPerElement;
  const double flash_bytes = steps->theory.flash_scratch_bytes;
  const double full = kBarFullScaleN * kBarFullScaleN * kBytesPerElement;
  ImGui::PushFont(heading_font());
  ImGui::Text("n = %lld, d = %lld: S has %s scores", static_cast<long long>(n), static_cast<long long>(d),
              format_count(double(n) * double(n)).c_str());
  ImGui::PopFont();
  const auto bars_at_n = [&] {
    ImGui::TextDisabled("bars to scale: full width = S at n = 16,384 (1 GiB of fp32); drag n in the parameters");
    ImGui::Spacing();
    draw_bar("S = Q K^T / sqrt(d), n x n", s_bytes / full, series_color(1), format_bytes_both(s_bytes));
    draw_bar("Q, K, V and O, 4 x n x d", qkvo_bytes / full, series_color(0), format_bytes_both(qkvo_bytes));
    draw_bar("flash: tiles per thread", flash_bytes / full, series_color(2), format_bytes_both(flash_bytes));
    ImGui::Spacing();
  };

  // The same three against n: S grows with n^2, Q K V O with n, the tiles not at all.
  PlotSpec spec{"Memory against n (closed forms)", {"n", "", true}, {"bytes", "B", true}, {}, {}};
  const PlotLine naive{
      "S (naive scratch) n^2 x 4 B", series_color(1), SeriesStyle::Line, false, false, steps->scores_bytes};
  const PlotLine operands{"Q, K, V, O  4 n d x 4 B", series_color(0), SeriesStyle::Line, false, false,
                          steps->operand_bytes};
  const PlotLine tiles{"flash scratch (tiles)", series_color(2), SeriesStyle::Line, false, false, steps->tile_bytes};
  spec.lines = {naive, operands, tiles};
  spec.guides.push_back({true, double(n), fmt::format("n = {}", n), highlight_color()});
  spec.guides.push_back({false, steps->host_free_bytes, "host memory free", warning_color()});
  draw_context_and_figure(bars_at_n, [&] { draw_plot("memory_vs_n", spec); });
}

void draw_shift_step(const ViewContext& ctx) {
  const flash::FlashSteps* steps = step_data_as<flash::FlashSteps>(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  static int shift = 100;
  ImGui::TextWrapped(
      "The worked example's scores plus a constant c. exp of a large score overflows fp32 (its largest "
      "value is about 3.4e38 = e^88.7); after subtracting the row max every exponent is <= 0.");
  if (!ctx.figure) {
    ImGui::SetNextItemWidth(260 * ui_scale());
    ImGui::SliderInt("c (added to every score)", &shift, 0, flash::kMaxScoreShift);
  }
  const flash::ShiftedScores& row = steps->shifted[std::clamp(shift, 0, flash::kMaxScoreShift)];
  if (!ImGui::BeginTable("shift", 5, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) return;
  for (const char* h : {"j", "score s_j", "exp(s_j) in fp32", "exp(s_j - max)", "weight"}) ImGui::TableSetupColumn(h);
  ImGui::TableHeadersRow();
  ImGui::PushFont(mono_font());
  for (std::size_t j = 0; j < row.scores.size(); ++j) {
    ImGui::TableNextRow();
    const std::string cells[] = {std::to_string(j + 1), fixed(row.scores[j], 1), fixed(row.raw_exp[j], 4),
                                 fixed(row.shifted_exp[j], 8), fixed(row.weights[j], 5)};
    for (const auto& cell : cells) {
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(cell.c_str());
    }
  }
  ImGui::PopFont();
  ImGui::EndTable();
  draw_value_table("shift_sums",
                   {
                       {"without the max: weight of s_2 = exp(s_2) / sum", fixed(row.naive_weight_of_second, 5)},
                       {"with the max subtracted: weight of s_2", fixed(row.weights[1], 5)},
                   });
}

void draw_online_softmax_step(const ViewContext& ctx) {
  const flash::FlashSteps* steps = step_data_as<flash::FlashSteps>(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const attention::OnlineSoftmaxRow& row = steps->example_row;
  const int stage = static_cast<int>(ctx.step_time_s / kSecondsPerExampleStage) % 3;  // 0, 1: after tile; 2: o
  ImGui::TextWrapped(
      "Scores [1, 3 | 0, 2] in two tiles; values v1 = [1, 0], v2 = [0, 2], v3 = [-1, 1], v4 = [3, 1]. "
      "Each row is the state after folding that tile in.");
  // One column per tile, one row per quantity: the column of the tile just folded in is highlighted.
  const auto& t1 = row.steps[0];
  const auto& t2 = row.steps[1];
  struct Line {
    const char* label;
    std::string tile1, tile2;
    bool rescale;  // a factor that is not 1 rescales one side of the merge
  };
  const Line lines[] = {
      {"scores in the tile", "[1, 3]", "[0, 2]", false},
      {"m_tile  (the tile's max)", fixed(t1.m_tile, 0), fixed(t2.m_tile, 0), false},
      {"l_tile = sum exp(s - m_tile)", fixed(t1.l_tile), fixed(t2.l_tile), false},
      {"z_tile = sum exp(s - m_tile) v", vec2(t1.z_tile), vec2(t2.z_tile), false},
      {"alpha = exp(m_old - m_new)", fixed(t1.alpha) + "  (nothing yet)", fixed(t2.alpha), false},
      {"beta = exp(m_tile - m_new)", fixed(t1.beta), fixed(t2.beta), true},
      {"m  (running max)", fixed(t1.m, 0), fixed(t2.m, 0), false},
      {"l = alpha l + beta l_tile", fixed(t1.l), fixed(t2.l), false},
      {"z = alpha z + beta z_tile", vec2(t1.z), vec2(t2.z), false},
  };
  if (ImGui::BeginTable("online", 3, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) {
    for (const char* h : {"", "after tile 1", "after tile 2"}) ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    for (const Line& line : lines) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(line.label);
      ImGui::PushFont(mono_font());
      for (int t = 0; t < 2; ++t) {
        ImGui::TableNextColumn();
        if (t == stage) ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg, with_alpha(highlight_color(), 0.22f));
        const std::string& cell = t == 0 ? line.tile1 : line.tile2;
        if (line.rescale && t == 1)
          highlighted_cell_text(cell);
        else
          ImGui::TextUnformatted(cell.c_str());
      }
      ImGui::PopFont();
    }
    ImGui::EndTable();
  }
  highlight_key(fixed(t2.beta), fmt::format("tile 2's max {} is below the running max {}, so its terms are scaled by "
                                            "beta = exp({} - {}) before they join l and z",
                                            fixed(t2.m_tile, 0), fixed(t2.m, 0), fixed(t2.m_tile, 0), fixed(t2.m, 0)));
  ImGui::Spacing();
  const std::vector<double>& w = steps->plain_weights;
  const std::vector<double>& plain = steps->plain_output;
  Rows rows = {
      {"o = z / l (divided once, at the end)", vec2(row.o)},
      {fmt::format("plain softmax: weights [{:.5f}, {:.5f}, {:.5f}, {:.5f}]", w[0], w[1], w[2], w[3]), vec2(plain)},
      {"tiled kernel, Algorithm 1 order (O kept divided by l)", vec2(steps->kernel_output_fa1)},
      {"tiled kernel, FlashAttention-2 order (z, divided at the end)", vec2(steps->kernel_output_fa2)},
  };
  if (stage == 2) rows.front().first += "   <-";
  draw_value_table("online_result", rows);
}

// Which tile the step shows: the step data's opening tile until one is picked, or playing through them all (view state
// only; the trace and the opening tile are step data).
struct TilePick {
  bool playing = false;
  int tile = -1;  // -1: the opening tile
};

void draw_tile_grid(const flash::FlashSteps& steps, std::size_t current) {
  const attention::FlashTrace& trace = steps.tile_trace;
  const std::int64_t tr = steps.tile_grid_rows, tc = steps.tile_grid_cols;
  std::vector<int> visit(static_cast<std::size_t>(tr * tc), -1);  // visit order of each tile, -1 = skipped (mask)
  for (std::size_t t = 0; t < trace.tiles.size(); ++t) visit[trace.tiles[t].i * tc + trace.tiles[t].j] = int(t);
  const float s = ui_scale();
  const float cell = std::clamp(std::min(180 * s / float(tc), 150 * s / float(tr)), 12 * s, 28 * s);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float left = 30 * s, top = ImGui::GetTextLineHeight() + 6 * s;
  draw->AddText({o.x + left, o.y}, muted_text_color(), "K/V blocks j ->");
  for (std::int64_t i = 0; i < tr; ++i) {
    draw->AddText({o.x, o.y + top + i * cell + cell * 0.3f}, muted_text_color(), std::to_string(i).c_str());
    for (std::int64_t j = 0; j < tc; ++j) {
      const int v = visit[i * tc + j];
      const ImVec2 a{o.x + left + j * cell, o.y + top + i * cell}, b{a.x + cell - 2 * s, a.y + cell - 2 * s};
      ImU32 color = with_alpha(muted_text_color(), 0.15f);
      if (v >= 0 && std::size_t(v) < current) color = with_alpha(series_color(0), 0.55f);
      if (v >= 0 && std::size_t(v) == current) color = highlight_color();
      draw->AddRectFilled(a, b, color, 2 * s);
      if (v < 0) draw->AddLine(a, b, muted_text_color(), 1 * s);  // skipped: wholly above the causal diagonal
    }
  }
  ImGui::Dummy({left + tc * cell, top + tr * cell + 4 * s});
  ImGui::TextDisabled("rows: Q blocks i");
  if (trace.problem.causal) ImGui::TextDisabled("crossed: masked, skipped");
}

// The traced tile's rows: m and l before, from the tile and after, with both rescale factors and the output row.
void draw_tile_rows(const attention::TileRecord& rec) {
  highlight_key("< 1",
                "a rescale: alpha scales what the row had (its max moved), beta scales the tile (the row's "
                "max is larger)");
  const char* headers[] = {"row", "m_old", "m_tile", "m_new", "alpha", "l_old", "l_tile", "l_new", "beta", "O_i row"};
  if (!ImGui::BeginTable("tile_rows", 10, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) return;
  for (const char* h : headers) ImGui::TableSetupColumn(h);
  ImGui::TableHeadersRow();
  ImGui::PushFont(mono_font());
  for (std::int64_t r = 0; r < rec.rows; ++r) {
    const attention::TileRowState& st = rec.row_states[r];
    std::string out;
    for (std::int64_t e = 0; e < std::min<std::int64_t>(2, rec.d); ++e)
      out += (e ? " " : "") + fmt::format("{:+.3f}", rec.output[r * rec.d + e]);
    if (rec.d > 2) out += " ..";
    const std::string cells[] = {std::to_string(rec.row_begin + r),
                                 fixed(st.m_old, 3),
                                 fixed(st.m_tile, 3),
                                 fixed(st.m_new, 3),
                                 fixed(st.alpha, 3),
                                 fixed(st.l_old, 3),
                                 fixed(st.l_tile, 3),
                                 fixed(st.l_new, 3),
                                 fixed(st.beta, 3),
                                 out};
    ImGui::TableNextRow();
    for (int col = 0; col < 10; ++col) {
      ImGui::TableNextColumn();
      // A factor below 1 is a rescale: the running max moved (alpha) or the tile's max is below it (beta).
      const bool rescale = (col == 4 && st.m_old != -INFINITY && st.alpha != 1) || (col == 8 && st.beta != 1);
      if (rescale)
        highlighted_cell_text(cells[col]);
      else
        ImGui::TextUnformatted(cells[col].c_str());
    }
  }
  ImGui::PopFont();
  ImGui::EndTable();
}

void draw_tiles_step(const ViewContext& ctx) {
  const flash::FlashSteps* steps = step_data_as<flash::FlashSteps>(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  static TilePick c;
  const float s = ui_scale();
  const attention::FlashTrace& trace = steps->tile_trace;
  const std::size_t count = trace.tiles.size();
  ImGui::TextDisabled("%s order, n = %lld, d = %lld, Br = %lld, Bc = %lld (the tiles step's parameters)",
                      trace.order == LoopOrder::KvOuter ? "Algorithm 1" : "FlashAttention-2",
                      static_cast<long long>(trace.problem.n), static_cast<long long>(trace.problem.d),
                      static_cast<long long>(trace.tiling.br), static_cast<long long>(trace.tiling.bc));
  const flash::OpeningTile& opening = steps->opening_tile;
  // Playing walks every tile; otherwise the picked one, or the opening tile until one is picked.
  int shown = c.playing ? static_cast<int>(ctx.step_time_s / kSecondsPerTile) % int(count)
                        : (c.tile >= 0 ? c.tile : static_cast<int>(opening.index));
  if (!ctx.figure) {
    ImGui::Checkbox("play", &c.playing);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(160 * s);
    int shown_from_one = shown + 1;  // counted from 1, as the heading counts "tile 7 of 20"
    if (ImGui::SliderInt("tile", &shown_from_one, 1, int(count))) {
      c.playing = false;
      c.tile = shown = shown_from_one - 1;
    }
  } else {
    ImGui::NewLine();
  }
  const std::size_t current = std::min<std::size_t>(std::size_t(std::max(shown, 0)), count - 1);
  const attention::TileRecord& rec = trace.tiles[current];

  ImGui::BeginGroup();
  draw_tile_grid(*steps, current);
  ImGui::EndGroup();
  ImGui::SameLine(0, 24 * s);
  ImGui::BeginGroup();
  ImGui::PushFont(heading_font());
  ImGui::Text("tile (%lld, %lld): %zu of %zu", static_cast<long long>(rec.i), static_cast<long long>(rec.j),
              current + 1, count);
  ImGui::PopFont();
  ImGui::Text("queries %lld..%lld, keys %lld..%lld", static_cast<long long>(rec.row_begin),
              static_cast<long long>(rec.row_begin + rec.rows - 1), static_cast<long long>(rec.col_begin),
              static_cast<long long>(rec.col_begin + rec.cols - 1));
  ImGui::TextDisabled("%s",
                      rec.output_normalised ? "O_i stored divided by l (line 12)" : "O_i holds z until its last tile");
  // Bytes to and from main memory: the traced kernel's own counters so far, and the closed forms at the lesson's
  // parameters for both orders and for standard attention.
  const auto& theory = steps->theory;
  draw_value_table(
      "tile_bytes",
      {
          {"trace: bytes moved so far", format_count(rec.traffic_so_far.total_elements() * kBytesPerElement)},
          {"  whole run tiled / standard",
           fmt::format("{} / {}", format_count(steps->tile_trace_total.total_elements() * kBytesPerElement),
                       format_count(steps->tile_trace_naive.total_elements() * kBytesPerElement))},
          {fmt::format("n = {}, d = {}: standard", steps->n, steps->d), format_bytes_both(theory.hbm_bytes_naive)},
          {fmt::format("  tiled {} x {}, Algorithm 1", theory.br, theory.bc),
           format_bytes_both(theory.hbm_bytes_flash_fa1)},
          {"  tiled, FlashAttention-2", format_bytes_both(theory.hbm_bytes_flash_fa2)},
      });
  ImGui::EndGroup();
  // Say why the step opens where it does, while it still shows that tile.
  if (!c.playing && current == opening.index) {
    const auto& moved = opening.rows_max_moved;
    const auto& kept = opening.rows_tile_rescaled;
    std::string why = opening.rescales
                          ? fmt::format(
                                "Shown first: tile {} of {}, the first where a running max moves (row{} {}, "
                                "alpha < 1)",
                                current + 1, count, moved.size() > 1 ? "s" : "", row_list(moved))
                          : std::string(
                                "No tile of this small problem moves a running max: every row meets its "
                                "largest score in its first tile. Try another tiles-step n or Bc");
    if (!kept.empty())
      why += fmt::format("; row{} {} keep{} {} (beta < 1)", kept.size() > 1 ? "s" : "", row_list(kept),
                         kept.size() > 1 ? "" : "s", kept.size() > 1 ? "theirs" : "its");
    ImGui::TextWrapped("%s.", why.c_str());
  }
  draw_tile_rows(rec);
}

// Whether every point of a series is zero or less: nothing a log axis can draw.
bool all_zero(const Series* series) {
  if (series == nullptr || series->points.empty()) return false;
  for (const SeriesPoint& p : series->points)
    if (p.y > 0) return false;
  return true;
}

// Plots the result's series with ids `<kernel>_<quantity>` (measured) and `<kernel>_<quantity>_theory`. A kernel
// whose measurement is zero at every n (flash's scratch on a GPU: its tiles live in shared memory) is left out
// with its closed form, rather than listed in the legend without a point; the caller says it in words.
void plot_series(const char* id, const RunResult& r, const char* title, const std::string& quantity,
                 const char* y_label, const char* y_unit, ImVec2 size) {
  PlotSpec spec{title, {"n", "", true}, {y_label, y_unit, true}, {}, {}};
  for (const char* kernel : {"naive", "flash"})
    for (const char* suffix : {"", "_theory"}) {
      const Series* series = r.find_series(fmt::format("{}_{}{}", kernel, quantity, suffix));
      if (series == nullptr || all_zero(r.find_series(fmt::format("{}_{}", kernel, quantity)))) continue;
      // One colour per kernel: its measurement as markers, its closed form as a dashed line.
      PlotLine line = line_from_series(*series, series_color(kernel == std::string("flash") ? 2 : 1));
      line.dashed = series->role == "theory";
      spec.lines.push_back(std::move(line));
    }
  spec.size = size;
  draw_plot(id, spec);
}

void draw_measured_step(const ViewContext& ctx) {
  if (!ctx.result) return draw_needs_run(ctx, "time, peak memory and error of both kernels against n");
  const RunResult& r = *ctx.result;
  if (r.series.empty())
    return draw_needs_run(ctx, "the sweep (this run only traced the worked example: set example = none)");
  const float s = ui_scale();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  // Time and memory, what the lesson trades, at the main figure's height; the error and the numbers under them.
  const float half = (avail.x - 24 * s) / 2, plot_h = main_figure_height();
  plot_series("time", r, "Time", "time", "time", "ms", {half, plot_h});
  ImGui::SameLine(0, 12 * s);
  plot_series("memory", r, "Peak scratch (memory ledger)", "scratch", "peak scratch", "B", {half, plot_h});
  plot_series("error", r, "Error vs double reference", "error", "max |o - o_ref|", "",
              {half, kSecondFigureShare * plot_h});
  ImGui::SameLine(0, 12 * s);
  ImGui::BeginGroup();
  const auto* m = r.measured_as<flash::FlashMeasured>();
  Rows rows;
  if (m && m->naive && m->flash && m->comparison) {
    const flash::KernelComparison& c = *m->comparison;
    const flash::FlashParams run = run_params<FlashLesson>(ctx);
    rows.push_back({fmt::format("n={} d={}: naive/flash", run.n, run.d),
                    fmt::format("{:.3g} / {:.3g} ms", m->naive->ms, m->flash->ms)});
    rows.push_back({"time flash/naive", fmt::format("{:.3f}", c.time_ratio_flash_over_naive)});
    rows.push_back({"scratch naive/flash", fmt::format("{}/{}", format_bytes_binary(double(m->naive->peak_bytes)),
                                                       format_bytes_binary(double(m->flash->peak_bytes)))});
    if (c.scratch_ratio_naive_over_flash)
      rows.push_back({"  naive/flash", fmt::format("{:.0f}x", *c.scratch_ratio_naive_over_flash)});
    rows.push_back({"error naive/flash", fmt::format("{:.1e}/{:.1e}", m->naive->max_abs_err, m->flash->max_abs_err)});
    rows.push_back({"  flash within twice naive's error", c.accuracy_rule_met ? "yes" : "NO"});
  }
  draw_value_table("measured_summary", rows);
  if (r.backend.kind == "cpu") {
    ImGui::Spacing();
    ImGui::PushTextWrapPos(0);
    ImGui::TextWrapped(
        "On a CPU there is no gap like the GPU's between HBM and SRAM: the caches play SRAM and the whole n x n score "
        "matrix may fit in them, so the lesson's memory saving shows here while the GPU's speed-up is not expected.");
    ImGui::PopTextWrapPos();
  } else if (r.backend.kind == "cuda") {
    ImGui::Spacing();
    ImGui::PushTextWrapPos(0);
    if (all_zero(r.find_series("flash_scratch")))
      ImGui::TextWrapped(
          "Flash's peak scratch is 0 B of device memory at every n, so the log plot above has no point for it.");
    if (m && m->flash_kernel == "v2_flash") {
      std::string caveat = kFlashPlainKernelCaveat;  // written to follow a bracket in the report: capitalised here
      caveat[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(caveat[0])));
      ImGui::TextWrapped("%s.", caveat.c_str());
    }
    for (const flash::PrecisionFigures& f : m ? m->by_precision : std::vector<flash::PrecisionFigures>{})
      if (f.naive && f.flash)
        ImGui::TextWrapped("%s: standard %.3f ms (%.0f TFLOP/s), %s %.3f ms (%.0f TFLOP/s)", f.precision.c_str(),
                           f.naive->ms, f.naive->tflops, f.flash_kernel.c_str(), f.flash->ms, f.flash->tflops);
    if (m && m->rows_checked_per_head > 0)
      ImGui::TextWrapped("Errors sampled: %lld rows of every head against the double reference.",
                         static_cast<long long>(m->rows_checked_per_head));
    ImGui::PopTextWrapPos();
  }
  ImGui::EndGroup();
}

}  // namespace

const StepViews& flash_step_views() {
  static const StepViews views{{"scores_memory", draw_memory_step, StepShows::TheoryOnly},
                               {"row_max_shift", draw_shift_step, StepShows::TheoryOnly},
                               {"online_softmax", draw_online_softmax_step, StepShows::TheoryOnly},
                               {"tiles", draw_tiles_step, StepShows::TheoryOnly},
                               {"measured", draw_measured_step}};
  return views;
}

}  // namespace dlsys::gui
