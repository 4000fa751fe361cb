// The drawing pieces the `bubble` and `schedules` views share (see pipeline_view.h).
#include "app/views/pipeline_view.h"

#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <map>

#include "app/gui/plot.h"
#include "app/gui/theme.h"
#include "engine/units.h"

namespace dlsys::gui::pipeline_views {

namespace {

// The schedule a run result was made with (for hover explanations of its measured timeline): the step data's, as
// long as the run used the parameters the panel shows.
const pipeline::Schedule* schedule_of_result(const ViewContext& ctx) {
  const PipelineSteps* steps = steps_of(ctx);
  return steps != nullptr && !ctx.result_stale ? steps->schedule.get() : nullptr;
}

std::string signed_fraction_text(double value) { return fmt::format("{:+.4f} ({:+.1f} %)", value, 100 * value); }

}  // namespace

void draw_error(const std::string& message) {
  ImGui::PushTextWrapPos(0);
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(warning_color()), "%s", message.c_str());
  ImGui::PopTextWrapPos();
}

std::string fraction_text(double value) { return fmt::format("{:.4f} ({:.1f} %)", value, 100 * value); }

void draw_timeline_widget(const char* id, const std::vector<Lane>& lanes, bool overlay, float height) {
  static std::map<std::string, TimelineViewState> views;
  std::vector<const Timeline*> timelines;
  std::vector<const TimelineMarks*> marks;
  for (const Lane& l : lanes) {
    timelines.push_back(l.timeline);
    marks.push_back(l.marks);
  }
  const TimelineHover hover = draw_timelines(id, timelines, overlay, views[id], {0, height}, marks);
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

TimelineMarks message_marks(const SchedulePanel& panel) {
  TimelineMarks marks;
  for (const pipeline_lesson::PipelineMessage& m : panel.messages)
    marks.arrows.push_back({m.from_lane, m.to_lane, m.sent, m.arrives});
  marks.arrows_label = fmt::format("{} messages between devices in {}", panel.message_count, panel.title);
  return marks;
}

void draw_in_flight(const char* id, const SchedulePanel& panel, float height, double y_max, double time_max) {
  const Timeline& timeline = panel.timeline;
  if (timeline.lanes.size() > panel.in_flight.size()) {
    ImGui::TextDisabled("%s", panel.peaks_text.c_str());
    height -= ImGui::GetTextLineHeightWithSpacing();
  }
  // Titled by schedule: steps that compare two schedules show two of these plots.
  PlotSpec spec{"In flight: " + timeline.name,
                {"time", timeline.time_unit == "units" ? "cost units" : timeline.time_unit},
                {"micro-batch chunks stashed", ""},
                {},
                {}};
  spec.y.min = 0;
  if (y_max > 0) spec.y.max = y_max * 1.08;  // a little headroom over the peak, the same for every plot compared
  if (time_max > 0) {
    spec.x.min = 0;
    spec.x.max = time_max;
  }
  for (const pipeline_lesson::InFlightCurve& curve : panel.in_flight)
    spec.lines.push_back({curve.label, series_color(static_cast<int>(spec.lines.size()) % 8), SeriesStyle::Line, false,
                          false, curve.points});
  spec.size = {0, height};
  draw_plot(id, spec);
}

void draw_theory(const char* id, const SchedulePanel& panel, float height, bool with_in_flight,
                 const TimelineMarks* marks) {
  if (!panel.error.empty()) return draw_error(panel.error);
  // The timeline is the main figure: with the count in flight under it, it keeps the main figure's height where the
  // view has it, and the plot takes the rest (or scrolls into view).
  const float timeline_h = with_in_flight ? std::max(0.5f * height, std::min(height, main_figure_height())) : height;
  const float top = ImGui::GetCursorPosY();
  draw_timeline_widget(id, {{&panel.timeline, &panel.sim->schedule, panel.sim->costs.p2p, marks}}, false, timeline_h);
  // The timeline may take less than its share (its lanes stop growing): the plot gets the rest.
  const float used = ImGui::GetCursorPosY() - top;
  if (with_in_flight) draw_in_flight((std::string(id) + "_inflight").c_str(), panel, height - used - 4);
}

void draw_two_theories(const char* id, const SchedulePanel& a, const SchedulePanel& b, float height,
                       const TimelineMarks* marks_a, const TimelineMarks* marks_b) {
  if (!a.error.empty()) return draw_error(a.error);
  if (!b.error.empty()) return draw_error(b.error);
  draw_timeline_widget(id,
                       {{&a.timeline, &a.sim->schedule, a.sim->costs.p2p, marks_a},
                        {&b.timeline, &b.sim->schedule, b.sim->costs.p2p, marks_b}},
                       false, height);
}

void draw_measured(const ViewContext& ctx, float height) {
  static bool overlay = true;
  const RunResult& r = *ctx.result;
  if (r.timelines.size() < 3) return draw_needs_run(ctx, "the pipeline for real");
  if (!ctx.figure) {
    ImGui::Checkbox("overlay (measured filled, its theory outlined)", &overlay);
    ImGui::SameLine();
  }
  if (const auto* m = r.measured_as<pipeline_lesson::PipelineMeasured>()) ImGui::TextDisabled("%s", m->mode.c_str());
  const pipeline::Schedule* s = schedule_of_result(ctx);
  draw_timeline_widget("measured", {{&r.timelines[1], s, 0.0}, {&r.timelines[2], s, 0.0}}, overlay, height);
}

bool draw_gap_split(const ViewContext& ctx) {
  const auto* m = ctx.result ? ctx.result->measured_as<pipeline_lesson::PipelineMeasured>() : nullptr;
  const auto* t = ctx.result ? ctx.result->theory_as<pipeline_lesson::PipelineTheory>() : nullptr;
  if (m == nullptr || t == nullptr) return false;
  const int repeats = ctx.result->backend.repeats;
  std::vector<std::pair<std::string, std::string>> rows{
      {"theory (the schedule simulated)", fraction_text(t->bubble_fraction)},
      {"+ uneven op times = replay - theory", signed_fraction_text(m->bubble_gap_uneven_op_times)},
      {"+ waiting overheads = measured - replay",
       m->bubble_gap_waiting ? signed_fraction_text(*m->bubble_gap_waiting) : "none: replayed"},
      {fmt::format("= measured ({}, median of {} step{})", m->mode, repeats, repeats == 1 ? "" : "s"),
       fraction_text(m->bubble_fraction)}};
  if (m->core_share) rows.push_back({"share of a core the stages got", fmt::format("{:.0f} %", 100 * *m->core_share)});
  ImGui::TextUnformatted("Idle share, measured against theory:");
  draw_value_table("gap_split", rows);
  ImGui::PushTextWrapPos(0);
  ImGui::TextDisabled(
      "Replay: the measured op times replayed on the schedule. Uneven op times: stage imbalance, noise. "
      "Waiting overheads: %s.",
      m->bubble_gap_waiting ? pipeline_lesson::waiting_overheads_cause(ctx.result->backend.kind)
                            : "none, the ops ran one at a time");
  if (m->serial_caveat)
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(warning_color()), "%s.", m->serial_caveat->c_str());
  ImGui::PopTextWrapPos();
  return true;
}

}  // namespace dlsys::gui::pipeline_views
