// Views of the `bubble` and `schedules` lessons: the model cut into stages, simulated timelines of the schedules
// (one lane per device, hover tells the op, what it needed and why it waited), the measured timeline stacked on or
// overlaid with its theory, activations in flight under the timeline, the bubble formula against m, and the
// comparison table. Everything simulated comes from the lesson's step data; these functions only draw it.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <map>
#include <memory>

#include "app/gui/plot.h"
#include "app/gui/theme.h"
#include "app/gui/timeline.h"
#include "app/views/view.h"
#include "engine/errors.h"
#include "engine/units.h"
#include "lessons/pipeline_common/pipeline_steps.h"

namespace dlsys::gui {

namespace {

using namespace pipeline;

using pipeline_lesson::PipelineSteps;
using pipeline_lesson::SchedulePanel;

const PipelineSteps* steps_of(const ViewContext& ctx) { return step_data_as<PipelineSteps>(ctx); }

// The schedule a run result was made with (for hover explanations of its measured timeline): the step data's, as
// long as the run used the parameters the panel shows.
const Schedule* schedule_of_result(const ViewContext& ctx) {
  const PipelineSteps* steps = steps_of(ctx);
  return steps != nullptr && !ctx.result_stale ? steps->schedule.get() : nullptr;
}

void draw_error(const std::string& message) {
  ImGui::PushTextWrapPos(0);
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(warning_color()), "%s", message.c_str());
  ImGui::PopTextWrapPos();
}

struct Lane {
  const Timeline* timeline;
  const Schedule* schedule;
  double p2p;
};

// One timeline widget over `lanes` (same time unit), stacked or overlaid, with the hover explanation as a tooltip.
void draw_timeline_widget(const char* id, const std::vector<Lane>& lanes, bool overlay, float height) {
  static std::map<std::string, TimelineViewState> views;
  std::vector<const Timeline*> timelines;
  for (const Lane& l : lanes) timelines.push_back(l.timeline);
  const TimelineHover hover = draw_timelines(id, timelines, overlay, views[id], {0, height});
  if (hover.timeline < 0 || hover.span < 0) return;
  const Lane& lane = lanes[hover.timeline];
  if (lane.schedule == nullptr) return;
  const auto lines = pipeline_lesson::describe_span(*lane.schedule, *lane.timeline, hover.span, lane.p2p);
  ImGui::BeginTooltip();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i == 0) ImGui::PushFont(heading_font());
    ImGui::TextUnformatted(lines[i].c_str());
    if (i == 0) ImGui::PopFont();
  }
  ImGui::EndTooltip();
}

// Activations in flight per device over time, with each device's peak in the legend.
void draw_in_flight(const char* id, const SchedulePanel& panel, float height) {
  const Timeline& timeline = panel.timeline;
  if (timeline.lanes.size() > panel.in_flight.size()) {
    ImGui::TextDisabled("%s", panel.peaks_text.c_str());
    height -= ImGui::GetTextLineHeightWithSpacing();
  }
  // Titled by schedule: steps that compare two schedules show two of these plots.
  PlotSpec spec{"Activations in flight, " + timeline.name + " (micro-batch chunks stashed)",
                {"time", timeline.time_unit},
                {"in flight", ""},
                {},
                {}};
  spec.y.min = 0;
  for (const pipeline_lesson::InFlightCurve& curve : panel.in_flight)
    spec.lines.push_back({curve.label, series_color(static_cast<int>(spec.lines.size()) % 8), SeriesStyle::Line, false,
                          false, curve.points});
  spec.size = {0, height};
  draw_plot(id, spec);
}

// Per device: forwards before the first backward (warm-up), the alternating middle, backwards after the last forward.
std::vector<std::vector<std::string>> phase_rows(const Schedule& s) {
  std::vector<std::vector<std::string>> rows;
  for (int d = 0; d < s.devices(); ++d) {
    const auto& ops = s.device_ops[d];
    int warmup = 0, cooldown = 0;
    while (warmup < static_cast<int>(ops.size()) && ops[warmup].kind == OpKind::F) ++warmup;
    for (int i = static_cast<int>(ops.size()) - 1; i >= 0 && ops[i].kind != OpKind::F; --i) ++cooldown;
    rows.push_back({fmt::format("device {}", d), std::to_string(warmup), std::to_string(ops.size() - warmup - cooldown),
                    std::to_string(cooldown)});
  }
  return rows;
}

// The theory timeline of a panel, with its in-flight plot under it when `with_in_flight`.
void draw_theory(const char* id, const SchedulePanel& panel, float height, bool with_in_flight) {
  if (!panel.error.empty()) return draw_error(panel.error);
  const float timeline_h = with_in_flight ? height * 0.5f : height;
  draw_timeline_widget(id, {{&panel.timeline, &panel.sim->schedule, panel.sim->costs.p2p}}, false, timeline_h);
  if (with_in_flight) draw_in_flight((std::string(id) + "_inflight").c_str(), panel, height - timeline_h - 4);
}

// Two theory panels stacked in one widget (same cost units, same time axis), e.g. 1F1B above ZB-H1.
void draw_two_theories(const char* id, const SchedulePanel& a, const SchedulePanel& b, float height) {
  if (!a.error.empty()) return draw_error(a.error);
  if (!b.error.empty()) return draw_error(b.error);
  draw_timeline_widget(
      id, {{&a.timeline, &a.sim->schedule, a.sim->costs.p2p}, {&b.timeline, &b.sim->schedule, b.sim->costs.p2p}}, false,
      height);
}

// The measured timeline with its partner in the same unit (the measured op times replayed, or the schedule at the
// median measured costs), stacked or overlaid as the user chooses.
void draw_measured(const ViewContext& ctx, float height) {
  static bool overlay = true;
  const RunResult& r = *ctx.result;
  if (r.timelines.size() < 3) return draw_needs_run("the pipeline for real");
  if (!figure_mode()) {
    ImGui::Checkbox("overlay (measured filled, its theory outlined)", &overlay);
    ImGui::SameLine();
  }
  if (const auto* m = r.measured_as<pipeline_lesson::PipelineMeasured>()) ImGui::TextDisabled("%s", m->mode.c_str());
  const Schedule* s = schedule_of_result(ctx);
  draw_timeline_widget("measured", {{&r.timelines[1], s, 0.0}, {&r.timelines[2], s, 0.0}}, overlay, height);
}

std::string fraction_text(double value) { return fmt::format("{:.4f} ({:.1f} %)", value, 100 * value); }

// ---------------------------------------------------------------- bubble

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

void draw_bubble_formula_plot(const pipeline_lesson::BubbleFormulas& f, float height) {
  static bool misprint = false;
  if (!figure_mode()) ImGui::Checkbox("show the course's misprint (1 - m)/(m + n - 1)", &misprint);
  PlotSpec spec{
      "Idle share of a fill-drain pipeline", {"m (micro-batches)", ""}, {"idle / (p x makespan)", ""}, {}, {}};
  // The chosen p in the theory colour, the others dashed beside it.
  for (std::size_t i = 0; i < f.fill_drain_curves.size(); ++i) {
    PlotLine line =
        line_from_series(f.fill_drain_curves[i], i == 0 ? theory_color() : with_alpha(series_color(int(i)), 0.7f));
    line.dashed = i > 0;
    spec.lines.push_back(std::move(line));
  }
  if (misprint) spec.lines.push_back(line_from_series(f.misprint_curve, warning_color()));
  spec.guides.push_back({true, double(f.m), fmt::format("m = {}", f.m), highlight_color()});
  spec.size = {0, height};
  draw_plot("formula", spec);
}

void draw_bubble_sweep_plot(const RunResult& r, float height) {
  static bool misprint = false;
  if (!figure_mode()) ImGui::Checkbox("show the course's misprint", &misprint);
  PlotSpec spec{
      "Bubble against m: measured and formula", {"m (micro-batches)", ""}, {"idle / (p x makespan)", ""}, {}, {}};
  int color = 0;
  for (const Series& series : r.series) {
    const bool is_misprint = series.id == "course_misprint";
    if (is_misprint && !misprint) continue;
    PlotLine line =
        line_from_series(series, is_misprint               ? warning_color()
                                 : series.role == "theory" ? (color++ == 0 ? theory_color() : series_color(2))
                                                           : series_color(0));
    line.dashed = series.role == "theory" && !is_misprint;
    spec.lines.push_back(std::move(line));
  }
  spec.size = {0, height};
  draw_plot("sweep", spec);
}

}  // namespace

namespace {

int param_p(const ViewContext& ctx) { return static_cast<int>(ctx.params.integer("p")); }

void draw_bubble_stages(const ViewContext& ctx) {
  const PipelineSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  draw_stages_diagram(param_p(ctx));
  const SchedulePanel& one = steps->panel("gpipe_m1");
  draw_theory("stages", one, ImGui::GetContentRegionAvail().y, false);
}

void draw_bubble_one_micro_batch(const ViewContext& ctx) {
  const PipelineSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const int p = param_p(ctx);
  const SchedulePanel& one = steps->panel("gpipe_m1");
  if (!one.error.empty()) return draw_error(one.error);
  draw_value_table("one", {{"devices p", std::to_string(p)},
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
  draw_value_table("course",
                   {{fmt::format("p = {}, m = {}: (p-1)/(m+p-1)", f.p, f.m), fraction_text(f.fill_drain)},
                    {"course: n = 2, m = 1", fraction_text(f.course_m1)},
                    {"course: n = 2, m = 4 (32 samples in 4 x 8)", fraction_text(f.course_m4)},
                    {"course: n = 2, m = 10 (under 10 %)", fraction_text(f.course_m10)},
                    {fmt::format("misprint (1-m)/(m+n-1) at n = {}, m = {}", f.p, f.m), format_number(f.misprint, 4)}});
  draw_bubble_formula_plot(f, ImGui::GetContentRegionAvail().y);
}

void draw_bubble_measured(const ViewContext& ctx) {
  const auto* m = ctx.result ? ctx.result->measured_as<pipeline_lesson::PipelineMeasured>() : nullptr;
  const auto* t = ctx.result ? ctx.result->theory_as<pipeline_lesson::PipelineTheory>() : nullptr;
  if (!m || !t || ctx.result->timelines.size() < 3) return draw_needs_run("the bubble for real and sweep m");
  draw_value_table("measured", {{"measured bubble fraction", fraction_text(m->bubble_fraction)},
                                {"theory", fraction_text(t->bubble_fraction)},
                                {"same op times, no waiting", fraction_text(m->replay_bubble_fraction)}});
  const float h = ImGui::GetContentRegionAvail().y;
  draw_measured(ctx, h * 0.45f);
  draw_bubble_sweep_plot(*ctx.result, ImGui::GetContentRegionAvail().y);
}

}  // namespace

const StepViews& bubble_step_views() {
  static const StepViews views{{"stages", draw_bubble_stages},
                               {"one_micro_batch", draw_bubble_one_micro_batch},
                               {"many_micro_batches", draw_bubble_many_micro_batches},
                               {"formula", draw_bubble_formula},
                               {"measured", draw_bubble_measured}};
  return views;
}

namespace {

// Steps 1-4 of `schedules`: the chosen schedule's theory with in-flight activations, and the measured run under it.
void draw_chosen_schedule(const ViewContext& ctx, bool phases) {
  const PipelineSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const SchedulePanel& panel = steps->panel("chosen");
  if (!panel.error.empty()) return draw_error(panel.error);
  if (phases) {
    const auto rows = phase_rows(panel.sim->schedule);
    if (rows.size() <= 6) {
      draw_columns_table("phases", {"", "warm-up ops", "middle ops", "cool-down ops"}, rows);
    } else {
      std::string warmup, cooldown;
      for (const auto& row : rows) {
        warmup += (warmup.empty() ? "" : ", ") + row[1];
        cooldown += (cooldown.empty() ? "" : ", ") + row[3];
      }
      ImGui::PushTextWrapPos(0);
      ImGui::TextWrapped(
          "Forwards before the first backward, device 0 to %zu: %s. Backwards after the last forward: %s.",
          rows.size() - 1, warmup.c_str(), cooldown.c_str());
      ImGui::PopTextWrapPos();
    }
  }
  const float h = ImGui::GetContentRegionAvail().y;
  const bool measured = ctx.result && ctx.result->timelines.size() >= 3 && ctx.result->params.count("schedule") &&
                        ctx.result->params.at("schedule") == ctx.params.text("schedule");
  // Theory, its activations in flight, then the measured run: the plot needs some 150 px to be read.
  draw_theory("chosen", panel, measured ? std::max(h * 0.58f, 260 * ui_scale()) : h, true);
  if (measured) draw_measured(ctx, ImGui::GetContentRegionAvail().y);
}

void draw_comparison(const ViewContext& ctx) {
  const PipelineSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const SchedulePanel& panel = steps->panel("chosen");
  if (!panel.error.empty()) return draw_error(panel.error);
  if (!steps->theory_error.empty()) return draw_error(steps->theory_error);
  std::vector<std::vector<std::string>> rows, formulas;
  for (const pipeline_lesson::ScheduleComparison& e : steps->theory.comparison) {
    if (!e.available) {
      rows.push_back({e.title, "-", "-", "-", "-", "-", "-", "-"});
      formulas.push_back({e.title, "not available: " + e.why});
      continue;
    }
    rows.push_back({e.title, std::to_string(e.devices), fmt::format("{}x", e.param_copies),
                    format_number(e.bubble_formula, 4), format_number(e.bubble_simulated, 4),
                    format_number(e.bubble_fraction_simulated, 4), std::to_string(e.peak_inflight),
                    format_number(e.peak_activation_stage_units, 3)});
    formulas.push_back({e.title, e.formula});
  }
  // Wrapped notes, unwrapped table cells.
  auto note = [](const std::string& text, bool muted) {
    ImGui::PushTextWrapPos(0);
    if (muted)
      ImGui::TextDisabled("%s", text.c_str());
    else
      ImGui::TextUnformatted(text.c_str());
    ImGui::PopTextWrapPos();
  };
  note(fmt::format("For p = {}, m = {} and the costs in the panel (per chunk; B means the {}).",
                   panel.setup.shape.devices, panel.setup.shape.micro_batches,
                   panel.setup.notation == "full" ? "full backward, as in DeepSeek-V3"
                                                  : "input gradient alone, as in the zero-bubble paper"),
       false);
  draw_columns_table("comparison",
                     {"schedule", "devices", "params", "bubble", "simulated", "idle share", "peak act.", "in 1/p"},
                     rows);
  note(
      "Bubble: the closed form per device, in cost units; simulated: the worst device's idle time. Idle share: idle / "
      "(p x makespan). Peak act.: (micro-batch, chunk) pairs stashed on the fullest device; in 1/p: the same in "
      "micro-batches through 1/p of the model.",
      true);
  ImGui::Spacing();
  draw_columns_table("formulas", {"schedule", "closed form for the bubble"}, formulas);
  note(
      "Sources: GPipe; Megatron-LM (Narayanan et al. 2021); zero bubble (Qi et al. 2024); [EXT] DeepSeek-V3 Table 2, "
      "exact in the simulator when F = B = W (B the input gradient).",
      true);
}

}  // namespace

namespace {

void draw_schedule_phase(const ViewContext& ctx) { draw_chosen_schedule(ctx, true); }

void draw_schedules_in_flight(const ViewContext& ctx) {
  const float h = ImGui::GetContentRegionAvail().y;
  const PipelineSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const SchedulePanel& gpipe = steps->panel("gpipe");
  const SchedulePanel& one = steps->panel("1f1b");
  if (!gpipe.error.empty() || !one.error.empty()) return draw_error(gpipe.error + one.error);
  draw_in_flight("gpipe_inflight", gpipe, h * 0.48f);
  draw_in_flight("1f1b_inflight", one, ImGui::GetContentRegionAvail().y);
}

void draw_schedules_interleaving(const ViewContext& ctx) {
  const PipelineSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  // The same model both ways: an interleaved chunk is 1/v of a stage, so its ops cost 1/v as much.
  const SchedulePanel& base = steps->panel("1f1b");
  if (!base.error.empty()) return draw_error(base.error);
  const int p = base.setup.shape.devices, v = base.setup.chunks;
  const SchedulePanel& inter = steps->panel("interleaved");
  const SchedulePanel& base_m = steps->panel("1f1b_interleaved_m");
  if (!inter.error.empty()) return draw_error(inter.error);
  draw_value_table(
      "inter", {{"1F1B bubble ratio (p-1)/m", fraction_text(steps->formulas.interleaved_ratio_1f1b)},
                {fmt::format("interleaved, v = {}: (p-1)/(v m)", v), fraction_text(steps->formulas.interleaved_ratio)},
                {"messages between devices per micro-batch", fmt::format("{} -> {}", 2 * (p - 1), 2 * (v * p - 1))}});
  draw_two_theories("interleaving", base_m, inter, ImGui::GetContentRegionAvail().y);
}

void draw_schedules_split_bw(const ViewContext& ctx) {
  const PipelineSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const SchedulePanel& one = steps->panel("1f1b");
  const SchedulePanel& zb = steps->panel("zb_h1");
  if (!one.error.empty() || !zb.error.empty()) return draw_error(one.error + zb.error);
  draw_value_table("zb", {{"1F1B idle share", fraction_text(one.sim->timing.bubble_fraction())},
                          {"ZB-H1 idle share", fraction_text(zb.sim->timing.bubble_fraction())}});
  draw_two_theories("split", one, zb, ImGui::GetContentRegionAvail().y);
}

void draw_schedules_dualpipe(const ViewContext& ctx) {
  const PipelineSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const int p = steps->dualpipe_p, m = steps->dualpipe_m;
  const SchedulePanel& dp = steps->panel("dualpipe");
  const SchedulePanel& one = steps->panel("1f1b_dualpipe");
  if (!dp.error.empty()) return draw_error(dp.error);
  ImGui::PushTextWrapPos(0);
  ImGui::TextDisabled(
      "DualPipe needs even p and m >= 2p: shown with p = %d, m = %d. Micro-batches 0..%d enter at "
      "device 0, %d..%d at device %d (marked by a dark band along the foot of their blocks).",
      p, m, m / 2 - 1, m / 2, m - 1, p - 1);
  ImGui::PopTextWrapPos();
  draw_two_theories("dualpipe", one, dp, ImGui::GetContentRegionAvail().y);
}

}  // namespace

const StepViews& schedules_step_views() {
  static const StepViews views{{"warmup", draw_schedule_phase},
                               {"steady_state", draw_schedule_phase},
                               {"cooldown", draw_schedule_phase},
                               {"in_flight", draw_schedules_in_flight},
                               {"interleaving", draw_schedules_interleaving},
                               {"split_bw", draw_schedules_split_bw},
                               {"dualpipe", draw_schedules_dualpipe},
                               {"comparison", draw_comparison}};
  return views;
}

}  // namespace dlsys::gui
