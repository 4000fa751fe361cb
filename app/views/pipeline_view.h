#pragma once
// Drawing pieces the `bubble` and `schedules` views share: a timeline widget with hover explanations, activations in
// flight under it, a schedule's theory, the measured run beside its theory, and where the measured bubble departs
// from theory. They draw the lessons' step data and typed run results and compute nothing of their own.
#include <string>
#include <vector>

#include "app/gui/timeline.h"
#include "app/views/view.h"
#include "lessons/pipeline_common/pipeline_steps.h"

namespace dlsys::gui::pipeline_views {

using pipeline_lesson::PipelineSteps;
using pipeline_lesson::SchedulePanel;

inline const PipelineSteps* steps_of(const ViewContext& ctx) { return step_data_as<PipelineSteps>(ctx); }

void draw_error(const std::string& message);
std::string fraction_text(double value);

// One timeline of a stack: what to draw, the schedule that explains a hovered span (nullptr: no explanation), the
// message latency it was simulated with, and what to draw over it.
struct Lane {
  const Timeline* timeline;
  const pipeline::Schedule* schedule;
  double p2p;
  const TimelineMarks* marks = nullptr;
};
// One timeline widget over `lanes` (same time unit), stacked or overlaid, with the hover explanation as a tooltip.
void draw_timeline_widget(const char* id, const std::vector<Lane>& lanes, bool overlay, float height);

// The arrows of a panel's messages, labelled with their count (none when the panel has too many to draw).
TimelineMarks message_marks(const SchedulePanel& panel);

// Activations in flight per device over time, with each device's peak in the legend. `y_max` and `time_max` > 0 fix
// the axes (plots that are compared share them).
void draw_in_flight(const char* id, const SchedulePanel& panel, float height, double y_max = 0, double time_max = 0);

// The theory timeline of a panel, with its in-flight plot under it when `with_in_flight`.
void draw_theory(const char* id, const SchedulePanel& panel, float height, bool with_in_flight,
                 const TimelineMarks* marks = nullptr);
// Two theory panels stacked in one widget (same cost units, same time axis), e.g. 1F1B above ZB-H1.
void draw_two_theories(const char* id, const SchedulePanel& a, const SchedulePanel& b, float height,
                       const TimelineMarks* marks_a = nullptr, const TimelineMarks* marks_b = nullptr);

// The measured timeline with its partner in the same unit (the measured op times replayed, or the schedule at the
// median measured costs), stacked or overlaid as the user chooses.
void draw_measured(const ViewContext& ctx, float height);
// Where the measured bubble departs from theory: uneven op times (replay - theory), waiting overheads (measured -
// replay), and the share of a core the stage threads got. Returns false (drawing nothing) without a run.
bool draw_gap_split(const ViewContext& ctx);

}  // namespace dlsys::gui::pipeline_views
