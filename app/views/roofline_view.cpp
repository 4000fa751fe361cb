// Views of the roofline lesson: the three costs, the course's A100 arithmetic beside this machine's, the roofs of the
// course's two GPUs, this machine's measured roof against its datasheet-style figure, the intensity sweep walking
// along the roof, the lab's kernels placed on it, and the overhead floor of tiny calls. Every number comes from the
// step data or the run's typed values; the views only lay them out.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "app/gui/plot.h"
#include "app/gui/theme.h"
#include "app/views/view.h"
#include "app/views/wide_tables.h"
#include "engine/units.h"
#include "lessons/roofline/roofline_steps.h"
#include "lessons/roofline/roofline_values.h"

namespace dlsys::gui {

namespace {

using roofline::RooflineMeasured;
using roofline::RooflineTheory;
using roofline::RoofPoint;
using Rows = std::vector<std::vector<std::string>>;

constexpr double kSecondsPerKernel = 2.5;  // the kernels step cycles its highlighted kernel this often

const roofline::RooflineSteps* steps_of(const ViewContext& ctx) { return step_data_as<roofline::RooflineSteps>(ctx); }
const RooflineMeasured* measured_of(const ViewContext& ctx) {
  return ctx.result ? ctx.result->measured_as<RooflineMeasured>() : nullptr;
}
const RooflineTheory* theory_of(const ViewContext& ctx) {
  return ctx.result ? ctx.result->theory_as<RooflineTheory>() : nullptr;
}

std::string gflops_text(double gflops) {
  return gflops >= 1e3 ? fmt::format("{} TFLOP/s", format_number(gflops / 1e3, 4))
                       : fmt::format("{} GFLOP/s", format_number(gflops, 4));
}

PlotSpec roof_spec(const char* title) {
  return PlotSpec{title, {"arithmetic intensity", "FLOP/B", true}, {"attainable", "GFLOP/s", true}, {}, {}};
}

// The measured roof (solid, theory colour) and the datasheet-style one (dashed, muted) of a run.
void add_roofs(PlotSpec& spec, const RunResult& r) {
  if (const Series* roof = r.find_series("roof")) spec.lines.push_back(line_from_series(*roof, theory_color()));
  if (const Series* sheet = r.find_series("roof_datasheet")) {
    spec.lines.push_back(line_from_series(*sheet, muted_text_color()));
    spec.lines.back().dashed = true;
  }
}

// A point marked by a vertical and a horizontal guide through it. Only the vertical one is labelled (at the top):
// a label at the right end of the horizontal one could sit under the legend; the value is written below the plot.
void add_crosshair(PlotSpec& spec, double x, double y, const std::string& x_label) {
  spec.guides.push_back({true, x, x_label, highlight_color()});
  spec.guides.push_back({false, y, "", highlight_color()});
}

std::string bound_by(const RoofPoint& p, double ridge) {
  return p.intensity < ridge ? "memory-bound" : "compute-bound";
}

void draw_costs_step(const ViewContext& ctx) {
  const roofline::RooflineSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const float s = ui_scale();
  const float avail = ImGui::GetContentRegionAvail().x;
  const int per_row = avail > 900 * s ? 3 : 1;  // side by side when there is room, stacked otherwise
  const float width = (avail - (per_row - 1) * 12 * s) / per_row;
  for (std::size_t i = 0; i < steps->costs.size(); ++i) {
    const roofline::CostCard& card = steps->costs[i];
    if (i % per_row != 0) ImGui::SameLine(0, 12 * s);
    ImGui::PushStyleColor(ImGuiCol_ChildBg, ImGui::ColorConvertU32ToFloat4(with_alpha(series_color(int(i)), 0.16f)));
    const float lines = per_row == 3 ? 9.5f : 7.0f;
    ImGui::BeginChild(fmt::format("cost{}", i).c_str(), {width, lines * ImGui::GetTextLineHeightWithSpacing()}, true);
    ImGui::PushFont(heading_font());
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(series_color(int(i))), "%s", card.name.c_str());
    ImGui::PopFont();
    ImGui::PushTextWrapPos(0);
    ImGui::TextWrapped("%s", card.what.c_str());
    ImGui::Spacing();
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(muted_text_color()), "dominates");
    ImGui::TextWrapped("%s", card.example.c_str());
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(muted_text_color()), "what helps");
    ImGui::TextWrapped("%s", card.remedy.c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndChild();
    ImGui::PopStyleColor();
  }
  const RooflineMeasured* m = measured_of(ctx);
  if (m == nullptr) return;
  ImGui::Spacing();
  ImGui::TextWrapped(
      "Measured in this run: y = 2x moves 8 B per FLOP and runs at %.2f GFLOP/s (bandwidth); the FMA chains run at "
      "%.1f "
      "GFLOP/s (compute); the tiniest y = 2x costs %s for %s and %s for %s (overhead).",
      m->y2x_gflops, m->peak_gflops, format_duration_us(m->overhead_call_floor_us).c_str(),
      m->overhead_call_what.c_str(), format_duration_us(m->overhead_pool_floor_us).c_str(),
      m->overhead_pool_what.c_str());
}

// Large values in the course's own notation, a power of ten that is a multiple of 3: 375e9, 187.5e9, 19.5e12.
std::string value_with_unit(double value, const std::string& unit) {
  if (unit == "%") return fmt::format("{:.3g} %", value);
  if (value < 1e5) return fmt::format("{} {}", format_number(value, 4), unit);
  const int exponent = 3 * static_cast<int>(std::floor(std::log10(value) / 3));
  return fmt::format("{:.4g}e{} {}", value / std::pow(10.0, exponent), exponent, unit);
}

void draw_arithmetic_step(const ViewContext& ctx) {
  const roofline::RooflineSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const RooflineMeasured* m = measured_of(ctx);
  ImGui::PushFont(heading_font());
  ImGui::TextUnformatted("The course's A100 (fp32, no tensor cores)");
  ImGui::PopFont();
  Rows rows;
  for (const roofline::ArithmeticRow& row : steps->a100_arithmetic)
    rows.push_back({row.quantity, row.formula, value_with_unit(row.value, row.unit)});
  draw_wide_columns_table("a100", {"quantity", "arithmetic", "value"}, rows);
  ImGui::Spacing();
  ImGui::PushFont(heading_font());
  ImGui::TextUnformatted("This machine, measured");
  ImGui::PopFont();
  if (m == nullptr) return draw_needs_run(ctx, "this machine's bandwidth and y = 2x");
  const std::string bw = fmt::format("{:.2f} GB/s", m->bandwidth_gbps);
  draw_wide_columns_table(
      "machine", {"quantity", "arithmetic", "value"},
      {
          {"memory bandwidth (fastest STREAM kernel: " + m->bandwidth_kernel + ")", "measured", bw},
          {"fp32 numbers read per second", bw + " / 4 B", value_with_unit(m->floats_per_s, "numbers/s")},
          {"elements of y = 2x per second", bw + " / 8 B", value_with_unit(m->y2x_elements_per_s, "elements/s")},
          {"y = 2x predicted at 1 FLOP per element", "bandwidth / 8 B", gflops_text(m->y2x_predicted_gflops)},
          {"y = 2x measured (STREAM scale, median call)", "measured", gflops_text(m->y2x_gflops)},
          {"fp32 compute (FMA chains)", "measured", gflops_text(m->peak_gflops)},
          {"share of compute y = 2x used", "measured / compute", value_with_unit(m->y2x_percent_of_peak, "%")},
      });
}

PlotLine point_line(const std::string& name, const SeriesPoint& p, ImU32 color) {
  return PlotLine{name, color, SeriesStyle::Markers, false, false, {p}};
}

void draw_rule_step(const ViewContext& ctx) {
  const roofline::RooflineSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const RooflineTheory& t = steps->theory;
  PlotSpec spec = roof_spec("attainable <= min(peak, bandwidth x intensity)");
  spec.lines.push_back(
      {steps->example_roof.name, series_color(0), SeriesStyle::Line, false, false, steps->example_roof.points});
  spec.lines.push_back(
      {steps->a100_roof.name, series_color(1), SeriesStyle::Line, false, false, steps->a100_roof.points});
  spec.lines.push_back(
      point_line(fmt::format("the course's kernel: {:g} FLOP/B -> {}", t.example_intensity_flop_per_byte,
                             gflops_text(t.example_attainable_gflops)),
                 steps->example_kernel, series_color(0)));
  spec.lines.push_back(point_line(fmt::format("y = 2x on the A100: 1/8 FLOP/B -> {}", gflops_text(t.a100_y2x_gflops)),
                                  steps->a100_y2x, series_color(1)));
  spec.guides.push_back(
      {true, t.example_ridge_flop_per_byte, fmt::format("ridge {:g}", t.example_ridge_flop_per_byte), series_color(0)});
  spec.guides.push_back({true, t.a100_fp32_ridge_flop_per_byte,
                         fmt::format("ridge {:g}", t.a100_fp32_ridge_flop_per_byte), series_color(1)});
  spec.size = {0, plot_height_leaving(3)};
  draw_plot("rule", spec);
  draw_wide_value_table(
      "rule_rows",
      {
          {"hypothetical GPU: ridge = 300 TFLOP/s / 1 TB/s", fmt::format("{:g} FLOP/B", t.example_ridge_flop_per_byte)},
          {"a kernel at 50 FLOP/B: min(300 TFLOP/s, 1 TB/s x 50)", gflops_text(t.example_attainable_gflops)},
          {"A100 fp32: ridge = 19.5 TFLOP/s / 1.5 TB/s", fmt::format("{:g} FLOP/B", t.a100_fp32_ridge_flop_per_byte)},
      });
}

void draw_machine_roof_step(const ViewContext& ctx) {
  const RooflineMeasured* m = measured_of(ctx);
  const RooflineTheory* t = theory_of(ctx);
  if (m == nullptr || t == nullptr) return draw_needs_run(ctx, "this machine's bandwidth and compute ceilings");
  PlotSpec spec = roof_spec("This machine's roof");
  add_roofs(spec, *ctx.result);
  if (const Series* y2x = ctx.result->find_series("kernel_y2x"))
    spec.lines.push_back(line_from_series(*y2x, series_color(0)));
  spec.guides.push_back({true, t->ridge_flop_per_byte.value_or(0),
                         fmt::format("ridge {:.3g} FLOP/B", t->ridge_flop_per_byte.value_or(0)), highlight_color()});
  spec.size = {0, plot_height_leaving(9)};
  draw_plot("machine_roof", spec);
  Rows rows;
  for (const roofline::StreamMeasure& s : m->stream_kernels)
    rows.push_back(
        {"STREAM " + s.kernel, fmt::format("{:.2f} GB/s", s.gbps), fmt::format("{:.2f} GB/s", s.gbps_median)});
  rows.push_back({"compute: FMA chains, every thread", gflops_text(m->peak_gflops), ""});
  const bool datasheet = t->datasheet_bandwidth_gbps.has_value();  // a GPU's published figures, not a CPU's estimate
  if (t->datasheet_peak_gflops)
    rows.push_back({(datasheet ? "datasheet: " : "datasheet-style: ") + t->datasheet_source,
                    gflops_text(*t->datasheet_peak_gflops), ""});
  if (datasheet)
    rows.push_back({"datasheet: memory bandwidth", fmt::format("{:.0f} GB/s", *t->datasheet_bandwidth_gbps), ""});
  if (m->sgemm_peak_gflops > 0)
    rows.push_back({"OpenBLAS sgemm (best seen on this machine)", gflops_text(m->sgemm_peak_gflops), ""});
  rows.push_back({"ridge: compute / bandwidth (" + m->bandwidth_kernel + ")",
                  fmt::format("{:.3g} FLOP/B", t->ridge_flop_per_byte.value_or(0)), ""});
  draw_wide_columns_table("ceilings", {"ceiling", "fastest call", "median call"}, rows);
}

void draw_sweep_step(const ViewContext& ctx) {
  const RooflineMeasured* m = measured_of(ctx);
  const RooflineTheory* t = theory_of(ctx);
  if (m == nullptr || t == nullptr || m->sweep_points.empty()) {
    if (const roofline::RooflineSteps* steps = steps_of(ctx)) {
      std::string ks;
      for (std::size_t i = 0; i < steps->sweep_k.size(); ++i)
        ks += fmt::format("{}k = {:g} ({:g} FLOP/B)", i ? ", " : "", steps->sweep_k[i], steps->sweep_intensity[i]);
      ImGui::TextWrapped("The sweep will visit %s.", ks.c_str());
    }
    return draw_needs_run(ctx, "the intensity sweep");
  }
  static int picked = -1;  // index into the sweep; -1 until the reader picks one: then the point nearest the ridge
  const int count = static_cast<int>(m->sweep_points.size());
  const int index = picked >= 0 && picked < count ? picked : m->sweep_nearest_ridge;
  const RoofPoint& p = m->sweep_points[std::size_t(index)];
  if (!ctx.figure) {
    // The point's name beside the slider, not on it: a slider over a few points has a wide grab, which would cover
    // part of the name wherever it stood.
    ImGui::SetNextItemWidth(160 * ui_scale());
    int shown = index;
    if (ImGui::SliderInt("##point of the sweep", &shown, 0, count - 1, "")) picked = shown;
    ImGui::SameLine();
    ImGui::Text("point of the sweep: %s", p.name.c_str());
  }
  PlotSpec spec = roof_spec("k FMAs per element: intensity k / 4");
  add_roofs(spec, *ctx.result);
  if (const Series* sweep = ctx.result->find_series("sweep")) {
    spec.lines.push_back(line_from_series(*sweep, series_color(0)));
    spec.lines.back().style = SeriesStyle::Markers;
  }
  add_crosshair(spec, p.intensity, p.gflops, fmt::format("{}: {:g} FLOP/B", p.id, p.intensity));
  spec.size = {0, plot_height_leaving(5)};
  draw_plot("sweep", spec);
  const double ridge = t->ridge_flop_per_byte.value_or(0);
  draw_wide_value_table(
      "sweep_rows",
      {
          {fmt::format("{}: {:g} FLOP/B, {}", p.name, p.intensity, bound_by(p, ridge)),
           fmt::format("{:.2f} GFLOP/s = {:.0f}% of the roof {:.2f} GFLOP/s", p.gflops, p.percent_of_roof,
                       p.roof_gflops)},
          {"where the sweep bends: its best GFLOP/s / the bandwidth of its first point",
           m->sweep_crosses_ridge ? fmt::format("{:.1f} / {:.2f} GB/s = {:.3g} FLOP/B", m->sweep_plateau_gflops,
                                                m->sweep_bandwidth_gbps, m->sweep_ridge_flop_per_byte)
                                  : std::string("not measured: the points stay on one side of the ridge (widen k)")},
          {"the ridge: peak / bandwidth",
           m->sweep_crosses_ridge ? fmt::format("{:.3g} FLOP/B (the bend is {:.2f}x it)", ridge, m->ridge_ratio)
                                  : fmt::format("{:.3g} FLOP/B", ridge)},
      });
}

// Each kernel keeps its place in the palette whichever of them a run measured: past the seventh, a colour comes back
// with another marker (categorical_line), and every point carries its name.
int kernel_index(const std::string& id) {
  static const char* const order[] = {"y2x",          "softmax",     "matmul_naive",    "decode_gemv",
                                      "matmul_tiled", "matmul_blas", "attention_naive", "attention_flash",
                                      "prefill_gemm"};
  for (int i = 0; i < int(std::size(order)); ++i)
    if (id == order[i]) return i;
  return int(std::size(order));
}

void draw_kernels_step(const ViewContext& ctx) {
  const RooflineMeasured* m = measured_of(ctx);
  const RooflineTheory* t = theory_of(ctx);
  if (m == nullptr || t == nullptr || m->roof_points.empty())
    return draw_needs_run(ctx, "the lab's kernels on this roof");
  static int picked = -1;  // -1: cycle through the kernels, one every kSecondsPerKernel
  const int count = static_cast<int>(m->roof_points.size());
  const int index =
      picked >= 0 && picked < count ? picked : static_cast<int>(ctx.step_time_s / kSecondsPerKernel) % count;
  const RoofPoint& p = m->roof_points[std::size_t(index)];
  if (!ctx.figure) {
    ImGui::SetNextItemWidth(300 * ui_scale());
    if (ImGui::BeginCombo("kernel", p.name.c_str())) {
      if (ImGui::Selectable("cycle through all", picked < 0)) picked = -1;
      for (int i = 0; i < count; ++i)
        if (ImGui::Selectable(m->roof_points[std::size_t(i)].name.c_str(), i == picked)) picked = i;
      ImGui::EndCombo();
    }
  }
  PlotSpec spec = roof_spec("The lab's kernels on this roof");
  add_roofs(spec, *ctx.result);
  for (const RoofPoint& k : m->roof_points)
    if (const Series* s = ctx.result->find_series("kernel_" + k.id)) {
      spec.lines.push_back(categorical_line(*s, kernel_index(k.id)));
      spec.lines.back().style = SeriesStyle::Markers;
      spec.lines.back().label_points = true;
    }
  add_crosshair(spec, p.intensity, p.gflops, fmt::format("{}: {:.3g} FLOP/B", p.label, p.intensity));
  spec.size = {0, plot_height_leaving(float(count) + 2.5f)};
  draw_plot("kernels", spec);
  ImGui::TextWrapped("%s: %.2f GFLOP/s at %.3g FLOP/B, %.0f%% of its roof; bytes counted as %s.", p.name.c_str(),
                     p.gflops, p.intensity, p.percent_of_roof, p.traffic.c_str());
  const double ridge = t->ridge_flop_per_byte.value_or(0);
  Rows rows;
  for (int i = 0; i < count; ++i) {
    const RoofPoint& k = m->roof_points[std::size_t(i)];
    rows.push_back({(i == index ? "> " : "  ") + k.label, fmt::format("{:.3g}", k.intensity),
                    fmt::format("{:.2f}", k.gflops), fmt::format("{:.0f}%", k.percent_of_roof), bound_by(k, ridge)});
  }
  draw_wide_columns_table("kernel_rows",
                          {"kernel (median call)", "FLOP/B", "GFLOP/s", "of its roof", "side of the ridge"}, rows);
}

void draw_overhead_step(const ViewContext& ctx) {
  const RooflineMeasured* m = measured_of(ctx);
  if (m == nullptr) return draw_needs_run(ctx, "the time of tiny calls");
  PlotSpec spec{"Time per call of y = 2x", {"elements", "", true}, {"time per call", "us", true}, {}, {}};
  int color = 0;
  for (const char* id : {"overhead_call", "overhead_pool"})
    if (const Series* s = ctx.result->find_series(id)) spec.lines.push_back(categorical_line(*s, color++));
  if (const Series* bytes = ctx.result->find_series("overhead_bytes")) {
    spec.lines.push_back(line_from_series(*bytes, theory_color()));
    spec.lines.back().dashed = true;
  }
  spec.size = {0, plot_height_leaving(3)};
  draw_plot("overhead", spec);
  draw_wide_value_table("floors", {
                                      {m->overhead_call_what, format_duration_us(m->overhead_call_floor_us)},
                                      {m->overhead_pool_what, format_duration_us(m->overhead_pool_floor_us)},
                                      {"an empty GPU kernel, launched and waited for",
                                       m->launch_and_wait_us ? format_duration_us(*m->launch_and_wait_us)
                                                             : "run with --backend cuda on a GPU"},
                                  });
}

}  // namespace

const StepViews& roofline_step_views() {
  static const StepViews views{{"costs", draw_costs_step},
                               {"arithmetic", draw_arithmetic_step},
                               {"rule", draw_rule_step, StepShows::TheoryOnly},
                               {"machine_roof", draw_machine_roof_step},
                               {"sweep", draw_sweep_step},
                               {"kernels", draw_kernels_step},
                               {"overhead", draw_overhead_step}};
  return views;
}

}  // namespace dlsys::gui
