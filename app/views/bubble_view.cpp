// Views of the `bubble` lesson: the model cut into stages, GPipe with one and with m micro-batches (idle time hatched
// and labelled bubble), the formula against m beside the course's misprint, and the measured run with its sweep.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>

#include "app/gui/figure_size.h"
#include "app/gui/plot.h"
#include "app/gui/theme.h"
#include "app/views/pipeline_view.h"
#include "engine/units.h"

namespace dlsys::gui {

namespace {

using namespace pipeline_views;

void draw_stages_diagram(int p) {
  const float s = ui_scale();
  const int shown = std::min(p, 8);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float gap = 36 * s, box_w = std::min(170 * s, (avail.x - gap * (shown - 1)) / shown), box_h = 64 * s;
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  for (int d = 0; d < shown; ++d) {
    const ImVec2 a{o.x + d * (box_w + gap), o.y + 18 * s}, b{a.x + box_w, a.y + box_h};
    draw->AddRectFilled(a, b, with_alpha(series_color(d % 8), 0.35f), 6 * s);
    draw->AddRect(a, b, series_color(d % 8), 6 * s, 0, 2 * s);
    const std::string label = fmt::format("device {}\nstage {}", d, d);
    draw->AddText({a.x + 8 * s, a.y + 8 * s}, text_color(), label.c_str());
    if (d + 1 < shown) {
      const float y_f = a.y + box_h * 0.35f, y_b = a.y + box_h * 0.7f, x0 = b.x + 4 * s, x1 = b.x + gap - 4 * s;
      draw->AddLine({x0, y_f}, {x1, y_f}, series_color(0), 2 * s);
      draw->AddTriangleFilled({x1, y_f}, {x1 - 6 * s, y_f - 4 * s}, {x1 - 6 * s, y_f + 4 * s}, series_color(0));
      draw->AddLine({x0, y_b}, {x1, y_b}, series_color(1), 2 * s);
      draw->AddTriangleFilled({x0, y_b}, {x0 + 6 * s, y_b - 4 * s}, {x0 + 6 * s, y_b + 4 * s}, series_color(1));
    }
  }
  draw->AddText(
      o, muted_text_color(),
      p > shown
          ? fmt::format("first {} of {} devices: activations go right (F), gradients come back left (B)", shown, p)
                .c_str()
          : "activations go right (F), gradients come back left (B)");
  ImGui::Dummy({avail.x, box_h + 28 * s});
}

// The misprint in a colour of its own that reads on both themes (the warning colour is a background tint).
ImU32 misprint_color() { return series_color(3); }

// The course's misprint is drawn by default beside the formula (the caption points at it); the checkbox hides it. The
// measured step compares the run with the formula: there the misprint's negative values would squash both into a
// strip at the top of the plot, so it is drawn only when asked for.
bool g_show_misprint = true;
bool g_show_misprint_measured = false;

void draw_bubble_formula_plot(const pipeline_lesson::BubbleFormulas& f, float height) {
  PlotSpec spec{"Idle share (p-1)/(m+p-1) of a fill-drain pipeline",
                {"m (micro-batches)", ""},
                {"idle / (p x makespan)", ""},
                {},
                {}};
  // The chosen p in the theory colour, the others dashed beside it.
  for (std::size_t i = 0; i < f.fill_drain_curves.size(); ++i) {
    PlotLine line =
        line_from_series(f.fill_drain_curves[i], i == 0 ? theory_color() : with_alpha(series_color(int(i)), 0.7f));
    line.dashed = i > 0;
    spec.lines.push_back(std::move(line));
  }
  if (g_show_misprint) spec.lines.push_back(line_from_series(f.misprint_curve, misprint_color()));
  spec.guides.push_back({true, double(f.m), fmt::format("m = {}", f.m), highlight_color()});
  spec.size = {0, height};
  draw_plot("formula", spec);
}

void draw_bubble_sweep_plot(const RunResult& r, float height) {
  PlotSpec spec{
      "Bubble against m: measured and formula", {"m (micro-batches)", ""}, {"idle / (p x makespan)", ""}, {}, {}};
  if (const Series* measured = r.find_series("measured"))
    spec.lines.push_back(line_from_series(*measured, series_color(0)));
  if (const Series* formula = r.find_series("fill_drain_theory")) {
    PlotLine line = line_from_series(*formula, theory_color());
    line.dashed = true;
    spec.lines.push_back(std::move(line));
  }
  if (const Series* simulated = r.find_series("simulated")) {
    PlotLine line = line_from_series(*simulated, series_color(2));
    line.dashed = true;
    spec.lines.push_back(std::move(line));
  }
  if (const Series* misprint = r.find_series("course_misprint"); misprint != nullptr && g_show_misprint_measured)
    spec.lines.push_back(line_from_series(*misprint, misprint_color()));
  spec.size = {0, height};
  draw_plot("sweep", spec);
}

void misprint_checkbox(const ViewContext& ctx, bool& shown) {
  if (!ctx.figure) ImGui::Checkbox("show the course's misprint", &shown);
}

void draw_bubble_stages(const ViewContext& ctx) {
  const PipelineSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  draw_stages_diagram(steps->formulas.p);
  const SchedulePanel& one = steps->panel("gpipe_m1");
  draw_theory("stages", one, ImGui::GetContentRegionAvail().y, false);
}

void draw_bubble_one_micro_batch(const ViewContext& ctx) {
  const PipelineSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const SchedulePanel& one = steps->panel("gpipe_m1");
  if (!one.error.empty()) return draw_error(one.error);
  draw_value_table("one", {{"devices p", std::to_string(steps->formulas.p)},
                           {"idle share, simulated", fraction_text(one.sim->timing.bubble_fraction())},
                           {"(p - 1)/p", fraction_text(steps->formulas.one_micro_batch)}});
  draw_theory("one_mb", one, ImGui::GetContentRegionAvail().y, true);
}

void draw_bubble_many_micro_batches(const ViewContext& ctx) {
  const PipelineSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const SchedulePanel& many = steps->panel("chosen");
  if (!many.error.empty()) return draw_error(many.error);
  draw_value_table("many", {{"idle share, simulated", fraction_text(many.sim->timing.bubble_fraction())},
                            {"(p - 1)/(m + p - 1)", fraction_text(steps->formulas.fill_drain)},
                            {"bubble ratio (p - 1)/m", fraction_text(steps->formulas.ratio)}});
  draw_theory("many_mb", many, ImGui::GetContentRegionAvail().y, true);
}

void draw_bubble_formula(const ViewContext& ctx) {
  const PipelineSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const pipeline_lesson::BubbleFormulas& f = steps->formulas;
  const std::vector<std::pair<std::string, std::string>> rows{
      {fmt::format("p = {}, m = {}", f.p, f.m), fraction_text(f.fill_drain)},
      {"course: n = 2, m = 1", fraction_text(f.course_m1)},
      {"course: n = 2, m = 4 (32 = 4 x 8)", fraction_text(f.course_m4)},
      {"course: n = 2, m = 10", fraction_text(f.course_m10)},
      {fmt::format("misprint at n = {}, m = {}", f.p, f.m), format_number(f.misprint, 4)}};
  // The numbers beside the plot where that leaves the plot half the width or more, so the plot keeps the height its
  // axes need in a 720-point window with presentation text; above it where it does not (the view then scrolls).
  float label_w = 0;
  for (const auto& row : rows) label_w = std::max(label_w, ImGui::CalcTextSize(row.first.c_str()).x);
  ImGui::PushFont(mono_font());
  const float value_w = ImGui::CalcTextSize("0.0000 (00.0 %)").x;
  ImGui::PopFont();
  const float table_w = label_w + value_w + 3 * ImGui::GetStyle().CellPadding.x + 2 * ImGui::GetFontSize();
  const float width = ImGui::GetContentRegionAvail().x;
  if (table_w < 0.5f * width) {
    ImGui::BeginChild("formula_numbers", {table_w, 0}, false, ImGuiWindowFlags_NoScrollbar);
    draw_value_table("course", rows);
    misprint_checkbox(ctx, g_show_misprint);
    ImGui::EndChild();
    ImGui::SameLine();
    ImGui::BeginChild("formula_plot", {0, 0}, false, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
    draw_bubble_formula_plot(f, ImGui::GetContentRegionAvail().y);
    ImGui::EndChild();
    return;
  }
  draw_value_table("course", rows);
  misprint_checkbox(ctx, g_show_misprint);
  draw_bubble_formula_plot(f, ImGui::GetContentRegionAvail().y);
}

void draw_bubble_measured(const ViewContext& ctx) {
  const auto* m = ctx.result ? ctx.result->measured_as<pipeline_lesson::PipelineMeasured>() : nullptr;
  if (!m || ctx.result->timelines.size() < 3) return draw_needs_run(ctx, "the bubble for real and sweep m");
  // The step's payoff is the sweep against the formula: it takes the left half of the view, whole height; the gap
  // split and the measured timeline of the chosen m stand beside it. Where the view is too narrow for two columns,
  // the sweep comes first and the rest below it (the view scrolls to them).
  const float width = ImGui::GetContentRegionAvail().x, gap = ImGui::GetStyle().ItemSpacing.x;
  if (width >= 2 * 320 * ui_scale() + gap) {
    const float h = ImGui::GetContentRegionAvail().y;
    ImGui::BeginChild("sweep_column", {(width - gap) / 2, h}, false, ImGuiWindowFlags_NoScrollbar);
    misprint_checkbox(ctx, g_show_misprint_measured);
    draw_bubble_sweep_plot(*ctx.result, ImGui::GetContentRegionAvail().y);
    ImGui::EndChild();
    ImGui::SameLine();
    // In a short window the numbers would leave the timeline a sliver under them: it comes first, at half the
    // column, and the numbers scroll under it.
    const bool short_window = window_is_short();
    ImGui::BeginChild("measured_column", {0, h}, false, short_window ? 0 : ImGuiWindowFlags_NoScrollbar);
    draw_context_and_figure([&] { draw_gap_split(ctx); },
                            [&] { draw_measured(ctx, short_window ? 0.5f * h : ImGui::GetContentRegionAvail().y); });
    ImGui::EndChild();
    return;
  }
  misprint_checkbox(ctx, g_show_misprint_measured);
  draw_bubble_sweep_plot(*ctx.result, plot_height_leaving(0));
  draw_gap_split(ctx);
  draw_measured(ctx, kSecondFigureShare * main_figure_height());
}

}  // namespace

const StepViews& bubble_step_views() {
  static const StepViews views{{"stages", draw_bubble_stages, StepShows::TheoryOnly},
                               {"one_micro_batch", draw_bubble_one_micro_batch, StepShows::TheoryOnly},
                               {"many_micro_batches", draw_bubble_many_micro_batches, StepShows::TheoryOnly},
                               {"formula", draw_bubble_formula, StepShows::TheoryOnly},
                               {"measured", draw_bubble_measured}};
  return views;
}

}  // namespace dlsys::gui
