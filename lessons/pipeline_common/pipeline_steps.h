#pragma once
// What the bubble and schedules steps draw before a run: the schedules each step compares, simulated from the
// parameter panel's values with the step's own changes (GPipe with one micro-batch, 1F1B against ZB-H1, DualPipe at
// an even p, ...), their activations in flight, and the comparison table. Computed once per parameter change.
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/run_result.h"
#include "lessons/common/lesson.h"
#include "lessons/pipeline_common/pipeline_lesson.h"

namespace dlsys::pipeline_lesson {

// Activations in flight on one device over time, as a step curve thinned to a few hundred points (each point keeps
// the largest count it covers, so peaks survive).
struct InFlightCurve {
  std::string label;  // "device 0: peak 4"
  std::vector<SeriesPoint> points;
};

// One simulated schedule, or why it cannot be drawn (the message `run` would give).
struct SchedulePanel {
  std::string error;
  std::string title;  // the schedule's name: "Interleaved 1F1B"
  Setup setup;
  std::shared_ptr<const Simulated> sim;
  Timeline timeline;
  std::vector<InFlightCurve> in_flight;  // at most six devices: the first, middle and last past six
  std::string peaks_text;                // every device's peak, in one line
  std::vector<DevicePhases> phases;      // per device: warm-up, steady state, cool-down
  // The messages between devices (arrows on the timeline); left empty past a few thousand, where arrows would only
  // paint the timeline over. `message_count` counts them all.
  std::vector<PipelineMessage> messages;
  int message_count = 0;
};

// A stretch of time on one lane that a step is about (an empty one: nothing on that lane).
struct LaneBand {
  int lane = 0;
  double start = 0, end = 0;
};

// The closed forms the bubble lesson's steps quote, at the panel's p and m and at the course's own numbers, and the
// fill-drain curves against m its formula step plots.
struct BubbleFormulas {
  int p = 0, m = 0;
  double one_micro_batch = 0;                           // (p - 1)/p
  double fill_drain = 0;                                // (p - 1)/(m + p - 1)
  double ratio = 0;                                     // (p - 1)/m
  double course_m1 = 0, course_m4 = 0, course_m10 = 0;  // (p - 1)/(m + p - 1) at the course's n = 2
  double misprint = 0;                                  // the course's (1 - m)/(m + n - 1) at n = p
  std::vector<Series> fill_drain_curves;                // m = 1 .. 64: p first, then whichever of 2, 4, 8 differ from p
  Series misprint_curve;
  double interleaved_ratio_1f1b = 0, interleaved_ratio = 0;  // (p-1)/m and (p-1)/(v m) at the interleaving step's m
};

struct PipelineSteps final : StepData {
  // Panels by name: "chosen" (the panel's values), "gpipe", "gpipe_m1", "1f1b", "zb_h1", "interleaved" and
  // "1f1b_interleaved_m" (m rounded up to a multiple of p), "dualpipe" and "1f1b_dualpipe" (p even, m >= 2p).
  std::map<std::string, SchedulePanel> panels;
  int interleaved_m = 0;
  // Messages between devices per micro-batch, from the closed forms: 2(p - 1) for 1F1B, 2(v p - 1) interleaved (each
  // micro-batch crosses every boundary between consecutive stages once forward and once backward).
  int messages_per_micro_batch_1f1b = 0, messages_per_micro_batch_interleaved = 0;
  int dualpipe_p = 0, dualpipe_m = 0;
  pipeline_lesson::PipelineTheory theory;  // the lesson's theory, with the comparison across schedules
  std::string theory_error;
  std::shared_ptr<const pipeline::Schedule> schedule;  // the chosen schedule, for hover texts on a measured run
  BubbleFormulas formulas;
  // The phase each of the schedules lesson's first steps is about, as bands on the chosen schedule's lanes, by step
  // id: "warmup" (until the first backward), "steady_state" (until the last forward ends), "cooldown" (the rest).
  std::map<std::string, std::vector<LaneBand>> phase_bands;
  // One scale for the in-flight plots of GPipe and 1F1B, so their heights compare: the larger peak and makespan.
  double in_flight_max = 0, in_flight_time_max = 0;

  pipeline::ScheduleKind chosen_schedule = pipeline::ScheduleKind::GPipe;  // the panel's schedule

  const SchedulePanel& panel(const std::string& name) const;
  // Whether `run` ran the panel's schedule, so its measured timeline can stand under the simulated one.
  bool ran_chosen_schedule(const RunResult& run) const;
};

// `comparisons`: also the schedules the schedules lesson compares (1F1B, ZB-H1, interleaved, DualPipe); the bubble
// lesson's steps need only the chosen schedule and GPipe with one micro-batch.
std::shared_ptr<const PipelineSteps> make_pipeline_steps(const PipelineParams& params, bool comparisons);

}  // namespace dlsys::pipeline_lesson
