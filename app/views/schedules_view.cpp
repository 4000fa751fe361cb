// Views of the `schedules` lesson: the chosen schedule with the phase each step is about picked out on its lanes,
// activations in flight of GPipe and 1F1B on one scale, interleaving with its messages drawn, B/W split, DualPipe's
// two directions, and the comparison table in one unit. Everything comes from the step data and the last run.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>

#include "app/gui/theme.h"
#include "app/views/pipeline_view.h"
#include "engine/units.h"

namespace dlsys::gui {

namespace {

using namespace pipeline_views;

const char* phase_name(const std::string& step_id) {
  if (step_id == "warmup") return "warm-up: until each device's first backward starts";
  if (step_id == "steady_state") return "steady state: from the first backward to the end of the last forward";
  return "cool-down: after the last forward";
}

// The counts a phase step is about, one column per device (from the step data): the warm-up counted both ways, the
// steady state's ops, or the ops after the last forward.
void draw_phase_table(const SchedulePanel& panel, const std::string& step_id) {
  using Count = int pipeline_lesson::DevicePhases::*;
  std::vector<std::pair<std::string, Count>> rows;
  if (step_id == "warmup")
    rows = {{"warm-up F", &pipeline_lesson::DevicePhases::warmup_forwards},
            {"F before 1st B", &pipeline_lesson::DevicePhases::forwards_before_first_backward}};
  else if (step_id == "steady_state")
    rows = {{"steady-state ops", &pipeline_lesson::DevicePhases::steady_ops}};
  else
    rows = {{"ops after last F", &pipeline_lesson::DevicePhases::cooldown_ops}};
  const std::size_t devices = panel.phases.size();
  if (devices <= 8) {
    std::vector<std::string> headers{""};
    for (std::size_t d = 0; d < devices; ++d) headers.push_back(panel.timeline.lanes[d]);
    std::vector<std::vector<std::string>> cells;
    for (const auto& [label, count] : rows) {
      cells.push_back({label});
      for (const pipeline_lesson::DevicePhases& ph : panel.phases) cells.back().push_back(std::to_string(ph.*count));
    }
    draw_columns_table("phases", headers, cells);
    return;
  }
  ImGui::PushTextWrapPos(0);
  for (const auto& [label, count] : rows) {
    std::string values;
    for (const pipeline_lesson::DevicePhases& ph : panel.phases)
      values += (values.empty() ? "" : ", ") + std::to_string(ph.*count);
    ImGui::TextWrapped("%s, device 0 to %zu: %s", label.c_str(), devices - 1, values.c_str());
  }
  ImGui::PopTextWrapPos();
}

// Steps 1-3: the chosen schedule with the step's phase picked out, and the measured run under it when there is one.
void draw_schedule_phase(const ViewContext& ctx, const std::string& step_id) {
  const PipelineSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const SchedulePanel& panel = steps->panel("chosen");
  if (!panel.error.empty()) return draw_error(panel.error);
  draw_phase_table(panel, step_id);
  TimelineMarks marks;
  if (const auto it = steps->phase_bands.find(step_id); it != steps->phase_bands.end())
    for (const pipeline_lesson::LaneBand& band : it->second) marks.bands.push_back({band.lane, band.start, band.end});
  marks.bands_label = phase_name(step_id);
  // The steady state is where the count in flight stays flat: its step shows the count under the timeline.
  const bool with_in_flight = step_id == "steady_state";
  const float h = ImGui::GetContentRegionAvail().y;
  const bool measured = ctx.result && ctx.result->timelines.size() >= 3 && steps->ran_chosen_schedule(*ctx.result);
  // The schedule with its phase is the main figure; the measured run follows it, the view scrolls to it.
  draw_theory("chosen", panel, measured && !with_in_flight ? main_figure_height() : h, with_in_flight, &marks);
  if (!measured) return;
  draw_measured(ctx, main_figure_height());
  draw_gap_split(ctx);
}

void draw_warmup(const ViewContext& ctx) { draw_schedule_phase(ctx, "warmup"); }
void draw_steady_state(const ViewContext& ctx) { draw_schedule_phase(ctx, "steady_state"); }
void draw_cooldown(const ViewContext& ctx) { draw_schedule_phase(ctx, "cooldown"); }

void draw_schedules_in_flight(const ViewContext& ctx) {
  const float h = ImGui::GetContentRegionAvail().y;
  const PipelineSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const SchedulePanel& gpipe = steps->panel("gpipe");
  const SchedulePanel& one = steps->panel("1f1b");
  if (!gpipe.error.empty() || !one.error.empty()) return draw_error(gpipe.error + one.error);
  // One scale for both: the heights are what the step compares. Side by side where each keeps a readable width,
  // else one under the other, the second scrolling into view.
  const float width = ImGui::GetContentRegionAvail().x, gap = ImGui::GetStyle().ItemSpacing.x;
  const bool side_by_side = width >= 2 * 320 * ui_scale() + gap;
  const float plot_h = side_by_side ? h : main_figure_height();
  ImGui::BeginChild("gpipe_column", {side_by_side ? (width - gap) / 2 : width, plot_h}, false,
                    ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  draw_in_flight("gpipe_inflight", gpipe, plot_h, steps->in_flight_max, steps->in_flight_time_max);
  ImGui::EndChild();
  if (side_by_side) ImGui::SameLine();
  ImGui::BeginChild("1f1b_column", {side_by_side ? 0 : width, plot_h}, false,
                    ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  draw_in_flight("1f1b_inflight", one, plot_h, steps->in_flight_max, steps->in_flight_time_max);
  ImGui::EndChild();
}

void draw_schedules_interleaving(const ViewContext& ctx) {
  const PipelineSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  // The same model both ways: an interleaved chunk is 1/v of a stage, so its ops cost 1/v as much.
  const SchedulePanel& base = steps->panel("1f1b");
  if (!base.error.empty()) return draw_error(base.error);
  const int v = base.setup.chunks;
  const SchedulePanel& inter = steps->panel("interleaved");
  const SchedulePanel& base_m = steps->panel("1f1b_interleaved_m");
  if (!inter.error.empty()) return draw_error(inter.error);
  if (!base_m.error.empty()) return draw_error(base_m.error);
  const TimelineMarks base_marks = message_marks(base_m), inter_marks = message_marks(inter);
  draw_context_and_figure(
      [&] {
        draw_value_table(
            "inter",
            {{"1F1B bubble ratio (p-1)/m", fraction_text(steps->formulas.interleaved_ratio_1f1b)},
             {fmt::format("interleaved, v = {}: (p-1)/(v m)", v), fraction_text(steps->formulas.interleaved_ratio)},
             {fmt::format("messages per micro-batch 2(p-1) -> 2(v p-1); in all (m = {})", steps->interleaved_m),
              fmt::format("{} -> {}; {} -> {}", steps->messages_per_micro_batch_1f1b,
                          steps->messages_per_micro_batch_interleaved, base_m.message_count, inter.message_count)}});
      },
      [&] {
        draw_two_theories("interleaving", base_m, inter, ImGui::GetContentRegionAvail().y, &base_marks, &inter_marks);
      });
}

void draw_schedules_split_bw(const ViewContext& ctx) {
  const PipelineSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const SchedulePanel& one = steps->panel("1f1b");
  const SchedulePanel& zb = steps->panel("zb_h1");
  if (!one.error.empty() || !zb.error.empty()) return draw_error(one.error + zb.error);
  draw_context_and_figure(
      [&] {
        draw_value_table("zb", {{"1F1B idle share", fraction_text(one.sim->timing.bubble_fraction())},
                                {"ZB-H1 idle share", fraction_text(zb.sim->timing.bubble_fraction())}});
      },
      [&] { draw_two_theories("split", one, zb, ImGui::GetContentRegionAvail().y); });
}

void draw_schedules_dualpipe(const ViewContext& ctx) {
  const PipelineSteps* steps = steps_of(ctx);
  if (steps == nullptr) return draw_step_data_missing(ctx);
  const int p = steps->dualpipe_p, m = steps->dualpipe_m;
  const SchedulePanel& dp = steps->panel("dualpipe");
  const SchedulePanel& one = steps->panel("1f1b_dualpipe");
  if (!dp.error.empty()) return draw_error(dp.error);
  if (!one.error.empty()) return draw_error(one.error);
  draw_context_and_figure(
      [&] {
        ImGui::PushTextWrapPos(0);
        ImGui::TextDisabled(
            "DualPipe needs even p and m >= 2p: shown with p = %d, m = %d. Micro-batches 0..%d enter at device 0; "
            "%d..%d enter at device %d and carry a dark band along the foot of their blocks.",
            p, m, m / 2 - 1, m / 2, m - 1, p - 1);
        ImGui::PopTextWrapPos();
        draw_value_table("dual", {{"1F1B idle share", fraction_text(one.sim->timing.bubble_fraction())},
                                  {"DualPipe idle share", fraction_text(dp.sim->timing.bubble_fraction())}});
      },
      [&] { draw_two_theories("dualpipe", one, dp, ImGui::GetContentRegionAvail().y); });
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
                    format_number(e.bubble_stage_fb_formula, 4), format_number(e.bubble_stage_fb_simulated, 4),
                    format_number(e.bubble_ratio_simulated, 4), format_number(e.bubble_fraction_simulated, 4),
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
  note(fmt::format("For p = {}, m = {} and the costs in the panel (per chunk; B means the {}). Bubbles in units of one "
                   "full-stage F + B (the F + B of 1/p of the model), so schedules with smaller chunks compare with "
                   "the others.",
                   panel.setup.shape.devices, panel.setup.shape.micro_batches,
                   panel.setup.notation == "full" ? "full backward, as in DeepSeek-V3"
                                                  : "input gradient alone, as in the zero-bubble paper"),
       false);
  draw_columns_table("comparison",
                     {"schedule", "devices", "params", "bubble / stage F+B", "simulated", "bubble / ideal",
                      "idle share", "peak act. (1/p)"},
                     rows);
  note(
      "Bubble / stage F+B: the closed form per device over a full stage's F + B; simulated: the worst device's idle "
      "time over the same. Bubble / ideal: all idle time over all compute time (Megatron-LM's normalisation; the "
      "interleaving step's (p-1)/m and (p-1)/(v m)). Idle share: idle / (p x makespan). Peak act.: micro-batches "
      "through 1/p of the model stashed on the fullest device.",
      true);
  ImGui::Spacing();
  draw_columns_table("formulas", {"schedule", "closed form for the bubble, in cost units per chunk"}, formulas);
  note(
      "Sources: GPipe; Megatron-LM (Narayanan et al. 2021); zero bubble (Qi et al. 2024); [EXT] DeepSeek-V3 Table 2, "
      "exact in the simulator when F = B = W (B the input gradient).",
      true);
}

}  // namespace

const StepViews& schedules_step_views() {
  static const StepViews views{{"warmup", draw_warmup},
                               {"steady_state", draw_steady_state},
                               {"cooldown", draw_cooldown},
                               {"in_flight", draw_schedules_in_flight, StepShows::TheoryOnly},
                               {"interleaving", draw_schedules_interleaving, StepShows::TheoryOnly},
                               {"split_bw", draw_schedules_split_bw, StepShows::TheoryOnly},
                               {"dualpipe", draw_schedules_dualpipe, StepShows::TheoryOnly},
                               {"comparison", draw_comparison, StepShows::TheoryOnly}};
  return views;
}

}  // namespace dlsys::gui
