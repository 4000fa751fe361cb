#pragma once
// What the `bubble` and `schedules` lessons share: their parameters, their theory (closed forms and the simulated
// schedule), the real run on the pipeline executor, timelines for the views and exports, and the comparison table.
#include <string>
#include <vector>

#include "kernels/pipeline/executor.h"
#include "kernels/pipeline/schedule.h"
#include "kernels/pipeline/simulate.h"
#include "lessons/common/lesson.h"
#include "lessons/pipeline_common/pipeline_values.h"

namespace dlsys::pipeline_lesson {

struct Defaults {
  std::string schedule;
  int m = 4;
};
std::vector<ParamSpec> param_specs(const Defaults& defaults);

// The parameters, read and checked together. Throws BadInput naming the parameter, the value and what is allowed.
struct Setup {
  pipeline::ScheduleShape shape;
  pipeline::OpCosts costs;  // b as the input gradient alone, whatever the notation the user chose
  pipeline::ExecutorConfig executor;
  int chunks = 2;        // v, for the interleaved schedule (also in the comparison table)
  std::string notation;  // "full": b is the full backward (DeepSeek-V3); "input": b is B alone (ZB paper)
};
Setup read_setup(const ParamValues& params);
// What the chosen backend cannot run: `concurrent` with more stages than CPU cores, or than GPUs. Throws BadInput.
void check_backend(const Setup& setup, BackendKind backend);

// The chosen schedule simulated with the chosen costs (the theory timeline), and the costs as the schedule sees them
// (the imbalance applied to its last model stage).
struct Simulated {
  pipeline::Schedule schedule;
  pipeline::OpCosts costs;
  pipeline::Timing timing;
};
Simulated simulate_setup(const Setup& setup);

// Closed forms, the simulated schedule and the comparison across schedules (the "theory" section of the result).
PipelineTheory theory(const ParamValues& params);

// The real run. Timelines: [0] theory (cost units), [1] measured (us), [2] its overlay partner in us: the measured
// step's own op times replayed on the schedule (concurrent and emulated modes), or the schedule simulated with the
// median measured op times (replayed mode, where [1] already is a replay).
RunResult run(const Lesson& lesson, RunContext& context);

// Timeline of a simulated or measured step; a pair (DualPipe's F&B) is drawn as its two halves side by side.
Timeline to_timeline(const pipeline::Schedule& schedule, const pipeline::Timing& timing, const pipeline::OpCosts& costs,
                     std::string name, std::string source, std::string mode, std::string time_unit);

// Activations in flight on one lane of a timeline (as the views draw them under it): a micro-batch's chunk is
// stashed from its F until its W, or until its B where no W follows.
pipeline::InFlight in_flight_from_timeline(const Timeline& timeline, int lane);

// What hovering a span shows: the op, where it ran, what it needed, and why it started when it did. `p2p` is the
// message latency the timeline was made with (0 for measured ones).
std::vector<std::string> describe_span(const pipeline::Schedule& schedule, const Timeline& timeline, int span,
                                       double p2p);

// The comparison table (from the theory's comparison) and what explains the measured bubble, as text.
std::string comparison_table(const PipelineTheory& theory);
std::string measurement_report(const RunResult& result);

}  // namespace dlsys::pipeline_lesson
