// Views of the matmul lesson: the dot product behind one c_ij, time against size on log-log axes, GFLOP/s of each
// implementation against the backend's peak (measured by the CPU backend, NVIDIA's datasheet figure on a GPU), and
// which tiles a tile of C reads; and the kernel ladder: each kernel's share of the library and its place on a roofline.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "app/gui/plot.h"
#include "app/gui/theme.h"
#include "app/views/bar_chart.h"
#include "app/views/view.h"
#include "engine/units.h"
#include "lessons/matmul/matmul_lesson.h"
#include "lessons/matmul/matmul_steps.h"
#include "lessons/matmul/matmul_values.h"

namespace dlsys::gui {

namespace {

constexpr int kMaxCellsShown = 10;  // matrices are drawn as at most 10 x 10 cells; labels give the true sizes

const matmul::MatmulSteps* steps_of(const ViewContext& ctx) { return step_data_as<matmul::MatmulSteps>(ctx); }

// A matrix drawn as a grid of cells; `fill(r, c)` picks each cell's colour (0 = background).
template <typename Fill>
void draw_grid(ImDrawList* draw, ImVec2 origin, int rows, int cols, float cell, Fill fill, const std::string& label) {
  const float s = ui_scale();
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const ImVec2 a{origin.x + c * cell, origin.y + r * cell}, b{a.x + cell - 2 * s, a.y + cell - 2 * s};
      const ImU32 color = fill(r, c);
      draw->AddRectFilled(a, b, color ? color : with_alpha(muted_text_color(), 0.18f), 2 * s);
    }
  draw->AddText({origin.x, origin.y + rows * cell + 4 * s}, text_color(), label.c_str());
}

// Outlines one cell of a grid drawn by draw_grid.
void outline_cell(ImDrawList* draw, ImVec2 origin, int row, int col, float cell) {
  const float s = ui_scale();
  const ImVec2 a{origin.x + col * cell, origin.y + row * cell}, b{a.x + cell - 2 * s, a.y + cell - 2 * s};
  draw->AddRect({a.x - 1 * s, a.y - 1 * s}, {b.x + 1 * s, b.y + 1 * s}, text_color(), 2 * s, 0, 2 * s);
}

void draw_dot_product_step(const ViewContext& ctx) {
  const matmul::MatmulSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const matmul::Shape s = steps->shape;
  const int rows = static_cast<int>(std::min<std::int64_t>(s.m, kMaxCellsShown));
  const int cols = static_cast<int>(std::min<std::int64_t>(s.n, kMaxCellsShown));
  const int inner = static_cast<int>(std::min<std::int64_t>(s.k, kMaxCellsShown));
  // The animation walks l along the row of A and down the column of B, one product per 0.6 s, then moves on.
  const int ticks = static_cast<int>(ctx.step_time_s / kAnimationTickS);
  const int element = (ticks / (inner + 2)) % (rows * cols);
  const int l = std::min(ticks % (inner + 2), inner);
  const int i = element / cols, j = element % cols;

  const float sc = ui_scale();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  // Grids on the left half, at the largest cell size that fits; the counters sit to their right.
  const float cell = std::clamp(std::min(avail.x * 0.5f / (inner + cols + 2.0f),
                                         (avail.y - 2 * ImGui::GetTextLineHeight()) / (inner + rows + 3.0f)),
                                10 * sc, 60 * sc);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const ImVec2 b_origin{o.x + (inner + 2) * cell, o.y};
  const ImVec2 a_origin{o.x, o.y + (inner + 2) * cell};
  const ImVec2 c_origin{b_origin.x, a_origin.y};
  const ImU32 hot = highlight_color(), row_col = with_alpha(series_color(0), 0.55f), done = series_color(2);
  draw_grid(
      draw, a_origin, rows, inner, cell, [&](int r, int c) { return r == i ? (c < l ? hot : row_col) : 0u; },
      fmt::format("A: {} x {}", s.m, s.k));
  draw_grid(
      draw, b_origin, inner, cols, cell, [&](int r, int c) { return c == j ? (r < l ? hot : row_col) : 0u; },
      fmt::format("B: {} x {}", s.k, s.n));
  draw_grid(
      draw, c_origin, rows, cols, cell,
      [&](int r, int c) { return r == i && c == j ? hot : (r * cols + c < element ? with_alpha(done, 0.6f) : 0u); },
      fmt::format("C: {} x {}", s.m, s.n));
  if (l > 0) {  // the product just added: a_il in A, b_lj in B, and the c_ij it goes into
    outline_cell(draw, a_origin, i, l - 1, cell);
    outline_cell(draw, b_origin, l - 1, j, cell);
    outline_cell(draw, c_origin, i, j, cell);
  }
  ImGui::Dummy({(inner + cols + 3) * cell, (inner + rows + 3) * cell + ImGui::GetTextLineHeight()});
  ImGui::SameLine();
  ImGui::BeginChild("counters", {0, 0}, false, ImGuiWindowFlags_HorizontalScrollbar);  // wide numbers stay reachable
  ImGui::PushTextWrapPos(0);
  ImGui::PushFont(mono_font());
  ImGui::TextWrapped("c_%d%d = sum over l of a_%dl * b_l%d: %d of %lld products, %d of %lld additions so far", i + 1,
                     j + 1, i + 1, j + 1, l, static_cast<long long>(s.k), std::max(0, l - 1),
                     static_cast<long long>(s.k - 1));
  ImGui::PopFont();
  if (s.m > kMaxCellsShown || s.n > kMaxCellsShown || s.k > kMaxCellsShown)
    ImGui::TextDisabled("(showing the first %d rows and columns; the counts below use the full sizes)", kMaxCellsShown);
  ImGui::PopTextWrapPos();
  ImGui::Spacing();
  draw_color_key({{0, "the product a_il * b_lj just added to c_ij", text_color()},
                  {hot, "c_ij and the pairs of row i and column j already multiplied into it"},
                  {row_col, "the rest of row i of A and column j of B, still to come"},
                  {with_alpha(done, 0.6f), "entries of C already finished"}});
  ImGui::Spacing();
  draw_value_table(
      "counts", {
                    {"multiplications  m n k", format_count(steps->multiplications)},
                    {"additions  m n (k - 1)", format_count(steps->additions)},
                    {"exact scalar operations  m n (2k - 1)", format_count(steps->multiplications + steps->additions)},
                    {"FLOPs as vendors count them  2 m n k", format_count(steps->flops)},
                });
  ImGui::EndChild();
}

const matmul::MatmulMeasured* measured_of(const ViewContext& ctx) {
  return ctx.result ? ctx.result->measured_as<matmul::MatmulMeasured>() : nullptr;
}

// The sweep's series with ids `<variant><suffix>`, in the colours of their variants, then `extra` in the theory style.
std::vector<PlotLine> variant_lines(const RunResult& r, const std::string& suffix, const char* extra) {
  std::vector<PlotLine> lines;
  const auto* m = r.measured_as<matmul::MatmulMeasured>();
  if (m == nullptr) return lines;
  int color = 0;
  for (const auto& v : m->variants)
    if (const Series* series = r.find_series(v.key + suffix)) lines.push_back(categorical_line(*series, color++));
  if (const Series* series = extra ? r.find_series(extra) : nullptr) {
    lines.push_back(line_from_series(*series, theory_color()));
    lines.back().dashed = true;
  }
  return lines;
}

// What the peak is called where it is drawn: the CPU backend measures its own ceiling, the CUDA backend reports
// NVIDIA's datasheet figure for the part (the source string says which, "measured: ..." or "datasheet: ...").
std::string peak_name(const std::string& source) {
  if (source.rfind("datasheet", 0) == 0) return "datasheet peak";
  if (source.rfind("measured", 0) == 0) return "measured peak";
  return "peak";
}

void draw_scaling_step(const ViewContext& ctx) {
  const matmul::MatmulMeasured* m = measured_of(ctx);
  if (!m) return draw_needs_run(ctx, "time against size for each implementation");
  PlotSpec spec{"Time of an n x n x n product", {"n", "", true}, {"time", "us", true}, {}, {}};
  add_compared_lines(ctx, spec, [](const RunResult& r) { return variant_lines(r, "_time", "cubic_theory"); });
  std::vector<std::pair<std::string, std::string>> slopes{{"theory: O(n^3)", "slope 3"}};
  for (const auto& v : m->variants)
    slopes.push_back({fmt::format("fitted slope, {} (n from {:g}, fastest call of each size)", v.key, v.slope_from_n),
                      format_number(v.slope, 3)});
  // The lesson's sentence on slopes far from 3 (a GPU at small sizes) goes first, so the plot leaves room for it.
  if (m->slope_caveat) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextWrapped("%s.", m->slope_caveat->c_str());
    ImGui::PopTextWrapPos();
  }
  spec.size = {0, plot_height_leaving(static_cast<int>(slopes.size()))};
  draw_plot("scaling", spec);
  draw_value_table("slopes", slopes);
}

void draw_libraries_step(const ViewContext& ctx) {
  const matmul::MatmulMeasured* m = measured_of(ctx);
  const matmul::MatmulTheory* theory = ctx.result ? ctx.result->theory_as<matmul::MatmulTheory>() : nullptr;
  if (!m || !theory) return draw_needs_run(ctx, "GFLOP/s of the naive, tiled and library kernels");
  PlotSpec spec{"Achieved GFLOP/s (2 n^3 / time)", {"n", "", true}, {"GFLOP/s", "", true}, {}, {}};
  add_compared_lines(ctx, spec, [](const RunResult& r) { return variant_lines(r, "_gflops", nullptr); });
  const double peak = theory->peak_gflops.value_or(0);
  const std::string peak_label = peak_name(theory->peak_source);
  if (peak > 0)
    spec.guides.push_back({false, peak, fmt::format("{} {:.0f} GFLOP/s", peak_label, peak), theory_color()});
  if (theory->nominal_peak_gflops > 0)
    spec.guides.push_back({false, theory->nominal_peak_gflops,
                           fmt::format("nominal {:.0f} GFLOP/s", theory->nominal_peak_gflops), muted_text_color()});
  spec.size = {0, plot_height_leaving(theory->nominal_peak_gflops > 0 ? 6 : 4)};
  draw_plot("gflops", spec);
  std::vector<std::pair<std::string, std::string>> rows;
  const matmul::Shape shape = run_params<MatmulLesson>(ctx).shape;
  for (const auto& v : m->variants)
    rows.push_back(
        {fmt::format("{} at {} x {} x {}", v.key, shape.m, shape.n, shape.k),
         v.precision == "fp32"
             ? fmt::format("{:8.1f} GFLOP/s  {:5.1f}% of {}", v.gflops, v.percent_of_peak, peak_label)
             : fmt::format("{:8.1f} GFLOP/s  {} on the tensor cores: above the fp32 peak", v.gflops, v.precision)});
  if (theory->nominal_peak_gflops > 0) {  // a CPU: its measured peak beside the nominal figure that judges it
    rows.push_back({"peak measured (OpenBLAS sgemm, best seen here)", fmt::format("{:.0f} GFLOP/s", peak)});
    rows.push_back(
        {"nominal " + theory->nominal_peak_source, fmt::format("{:.0f} GFLOP/s", theory->nominal_peak_gflops)});
  }
  rows.push_back({"largest error vs double reference",
                  fmt::format("{:.2e}, {}", m->max_rel_err,
                              m->wrong ? "beyond fp32 rounding: a kernel is wrong" : "within fp32 rounding")});
  draw_value_table("gflops_table", rows);
}

void draw_tiling_step(const ViewContext& ctx) {
  const matmul::MatmulSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const int tile = steps->tile;
  const int tiles_m = static_cast<int>(std::min<std::int64_t>(steps->tiles_m, 8));
  const int tiles_n = static_cast<int>(std::min<std::int64_t>(steps->tiles_n, 8));
  const int tiles_k = static_cast<int>(std::min<std::int64_t>(steps->tiles_k, 8));
  const int current = static_cast<int>(ctx.step_time_s / 1.5) % (tiles_m * tiles_n);
  const int ti = current / tiles_n, tj = current % tiles_n;
  const float sc = ui_scale();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float cell = std::clamp(std::min(avail.x * 0.45f / (tiles_k + tiles_n + 2.0f),
                                         (avail.y - 2 * ImGui::GetTextLineHeight()) / (tiles_k + tiles_m + 3.0f)),
                                10 * sc, 60 * sc);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const ImVec2 b_origin{o.x + (tiles_k + 1.5f) * cell, o.y}, a_origin{o.x, o.y + (tiles_k + 1.5f) * cell};
  const ImVec2 c_origin{b_origin.x, a_origin.y};
  const ImU32 panel_a = with_alpha(series_color(0), 0.8f), panel_b = with_alpha(series_color(1), 0.8f);
  draw_grid(
      draw, a_origin, tiles_m, tiles_k, cell, [&](int r, int) { return r == ti ? panel_a : 0u; },
      fmt::format("A: {} x {} tiles", steps->tiles_m, steps->tiles_k));
  draw_grid(
      draw, b_origin, tiles_k, tiles_n, cell, [&](int, int c) { return c == tj ? panel_b : 0u; },
      fmt::format("B: {} x {} tiles", steps->tiles_k, steps->tiles_n));
  draw_grid(
      draw, c_origin, tiles_m, tiles_n, cell, [&](int r, int c) { return r == ti && c == tj ? highlight_color() : 0u; },
      fmt::format("C: tile ({}, {})", ti + 1, tj + 1));
  ImGui::Dummy({(tiles_k + tiles_n + 2) * cell, (tiles_k + tiles_m + 2.5f) * cell + ImGui::GetTextLineHeight()});
  ImGui::SameLine();
  ImGui::BeginChild("traffic_panel", {0, 0}, false, ImGuiWindowFlags_HorizontalScrollbar);
  auto row = [&](const std::string& what, const matmul::Traffic& traffic) {
    return std::vector<std::string>{what, format_bytes_both(traffic.bytes),
                                    fmt::format("{:.3g}", traffic.flop_per_byte)};
  };
  draw_columns_table(
      "traffic", {"main-memory traffic", "bytes", "FLOP/byte"},
      {row("naive loop (no reuse)", steps->naive), row(fmt::format("{0} x {0} tiles", tile), steps->tiled),
       row("perfect reuse (A, B read once)", steps->minimum)});
  const matmul::MatmulMeasured* m = measured_of(ctx);
  if (m && m->tiled_speedup_over_naive)
    ImGui::TextWrapped("Measured: the tiled kernel runs %.1fx faster than the naive loop.",
                       *m->tiled_speedup_over_naive);
  ImGui::EndChild();
}

// One bar per kernel, scaled so that 100% (the library) is the same length on every row; each precision its colour,
// the library's bar solid and the lab's lighter.
void draw_percent_bars(const std::vector<matmul::VariantMeasure>& variants) {
  const char* precisions[] = {"fp32", "tf32", "bf16"};
  std::vector<Bar> bars;
  for (const auto& v : variants) {
    const int color = int(std::find(std::begin(precisions), std::end(precisions), v.precision) - precisions);
    bars.push_back({fmt::format("{} ({})", v.key, v.kernel.empty() ? v.key : v.kernel), v.percent_of_library,
                    v.library ? series_color(color) : with_alpha(series_color(color), 0.65f),
                    v.library ? fmt::format("the {} library: {:.1f} GFLOP/s", v.precision, v.gflops)
                              : fmt::format("{:.1f}% of the {} library, {:.1f} GFLOP/s", v.percent_of_library,
                                            v.precision, v.gflops)});
  }
  draw_bars(bars, {.row_lines = 1.35f, .full_scale = 100});
}

// The library's kernel in a tensor-core precision (tf32, bf16): its measured rate is the ceiling the ladder's
// tensor-core rungs are held to.
bool tensor_core_library(const matmul::VariantMeasure& v) { return v.library && v.precision != "fp32"; }

void draw_ladder_step(const ViewContext& ctx) {
  const matmul::MatmulMeasured* m = measured_of(ctx);
  const matmul::MatmulTheory* theory = ctx.result ? ctx.result->theory_as<matmul::MatmulTheory>() : nullptr;
  if (!m || !theory) return draw_needs_run(ctx, "each kernel's share of the library and its place on the roofline");
  const matmul::Shape shape = run_params<MatmulLesson>(ctx).shape;
  const auto shares = [&] {
    ImGui::TextUnformatted(fmt::format("At {} x {} x {}: GFLOP/s as a share of the library in the same precision",
                                       shape.m, shape.n, shape.k)
                               .c_str());
    draw_percent_bars(m->variants);
    if (!m->best_fp32_key.empty())
      ImGui::TextWrapped("Best fp32 kernel of the lab: %s, %.1f%% of the library's fp32.", m->best_fp32_key.c_str(),
                         m->best_fp32_percent_of_blas);
  };
  PlotSpec spec{"Roofline: each kernel at the intensity its tiles give it",
                {"arithmetic intensity", "FLOP/B", true},
                {"GFLOP/s", "", true},
                {},
                {}};
  if (const Series* roof = ctx.result->find_series("roof_fp32")) {
    spec.lines.push_back(line_from_series(*roof, theory_color()));
    spec.lines.back().name =
        m->roof_bandwidth_gbps
            ? fmt::format("fp32 roof: min({}, {} {:.1f} GB/s x intensity)", peak_name(theory->peak_source),
                          m->roof_bandwidth_source.value_or("bandwidth"), *m->roof_bandwidth_gbps)
            : fmt::format("fp32 roof: min({}, bandwidth x intensity)", peak_name(theory->peak_source));
  }
  int color = 0;
  for (const auto& v : m->variants)
    if (const Series* point = ctx.result->find_series(v.key + "_roof")) {
      spec.lines.push_back(categorical_line(*point, color++));
      spec.lines.back().style = SeriesStyle::Markers;
      // A tensor-core library's point sits on its own ceiling's line below, whose label names it.
      spec.lines.back().label_points = !tensor_core_library(v);
    }
  for (const auto& v : m->variants)  // the measured tensor-core ceilings: what the library reaches in tf32 and bf16
    if (tensor_core_library(v))
      spec.guides.push_back(
          {false, v.gflops, fmt::format("{}: {:.0f} TFLOP/s measured", v.key, v.gflops / 1e3), muted_text_color()});
  if (spec.lines.empty()) {
    shares();
    ImGui::TextDisabled("No roofline: this device's peak or bandwidth is not known.");
    return;
  }
  // Under the bars the roofline takes the rest of the view; in a short window the bars would leave it a strip, so it
  // comes first at the main figure's height.
  draw_context_and_figure(shares, [&] {
    spec.size = {0, figure_height_after_context(160 * ui_scale())};
    draw_plot("ladder_roofline", spec);
  });
}

}  // namespace

const StepViews& matmul_step_views() {
  static const StepViews views{{"dot_product", draw_dot_product_step, StepShows::TheoryOnly},
                               {"scaling", draw_scaling_step, StepShows::Measurement, CompareLayout::Overlaid},
                               {"libraries", draw_libraries_step, StepShows::Measurement, CompareLayout::Overlaid},
                               {"tiling", draw_tiling_step},
                               {"ladder", draw_ladder_step}};
  return views;
}

}  // namespace dlsys::gui
