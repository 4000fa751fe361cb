#pragma once
// What the `bubble` and `schedules` lessons share: their parameters, their theory (closed forms and the simulated
// schedule), the real run on the pipeline executor, timelines for the views and exports, and the comparison table.
#include <string>
#include <vector>

#include "kernels/pipeline/executor.h"
#include "kernels/pipeline/schedule.h"
#include "kernels/pipeline/simulate.h"
#include "lessons/common/lesson.h"
#include "lessons/common/run_plan.h"
#include "lessons/pipeline_common/pipeline_params.h"
#include "lessons/pipeline_common/pipeline_values.h"

namespace dlsys::pipeline_lesson {

struct Defaults {
  std::string schedule;
  int p = 2;
  int m = 4;
};
std::vector<ParamSpec> param_specs(const Defaults& defaults);

// The parameters as the executor and the simulation take them, checked together.
struct Setup {
  pipeline::ScheduleShape shape;
  pipeline::OpCosts costs;  // b as the input gradient alone, whatever the notation the user chose
  pipeline::ExecutorConfig executor;
  int chunks = 2;        // v, for the interleaved schedule (also in the comparison table)
  std::string notation;  // "full": b is the full backward (DeepSeek-V3); "input": b is B alone (ZB paper)
};
// Throws BadInput naming the parameter, the value and what is allowed (a shape the schedule cannot run, b not above w
// in the full notation, an F&B shorter than its halves).
Setup setup_of(const PipelineParams& params);
// Whether the executor's buffers for the setup's schedule fit in free host memory (a run's need: the theory and the
// simulated timelines need none of it). Throws BadInput.
void check_host_memory(const Setup& setup);
// What the chosen backend cannot run: `concurrent` with more stages than CPU cores, or than GPUs. Throws BadInput.
void check_backend(const Setup& setup, BackendKind backend);
// Seconds a CPU run of the setup's schedule with `micro_batches` takes: the warm-up (one step, and at least the
// executor's minimum), the timed steps and the single-device reference, each step 12 rows h^2 FLOP per block and
// micro-batch (F, B and W are two GEMMs each) at one BLAS thread per stage, plus a fixed cost per op.
double cpu_run_seconds(const Setup& setup, int micro_batches);
// What cpu_run_seconds counts, for a refusal's message.
std::string cpu_run_work(const Setup& setup);

// The chosen schedule simulated with the chosen costs (the theory timeline), and the costs as the schedule sees them
// (the imbalance applied to its last model stage).
struct Simulated {
  pipeline::Schedule schedule;
  pipeline::OpCosts costs;
  pipeline::Timing timing;
};
Simulated simulate_setup(const Setup& setup);

// Closed forms, the simulated schedule and the comparison across schedules (the "theory" section of the result).
PipelineTheory theory_of(const PipelineParams& params);

// The real run. Timelines: [0] theory (cost units), [1] measured (us), [2] its overlay partner in us: the measured
// step's own op times replayed on the schedule (concurrent and emulated modes), or the schedule simulated with the
// median measured op times (replayed mode, where [1] already is a replay). The run is one part of `plan`, weighing
// its micro-batch count (a step's work grows with it).
RunResult run(const Lesson& lesson, const PipelineParams& params, RunContext& context, RunPlan& plan);

// Timeline of a simulated or measured step; a pair (DualPipe's F&B) is drawn as its two halves side by side.
Timeline to_timeline(const pipeline::Schedule& schedule, const pipeline::Timing& timing, const pipeline::OpCosts& costs,
                     std::string name, std::string source, std::string mode, std::string time_unit);

// A span's label: "F3", and "F3a" / "F3b" where a micro-batch passes a device more than once (its chunks differ).
std::string span_label(const pipeline::Schedule& schedule, const pipeline::Op& op);

// A message between two devices: the activation a forward sends to the next stage, or the gradient a backward sends
// to the previous one, leaving when its op ends and arriving a p2p latency later. Stages on the same device (the
// tip of DualPipeV's V) exchange no message.
struct PipelineMessage {
  int from_lane = 0, to_lane = 0;
  double sent = 0, arrives = 0;
  bool backward = false;
};
std::vector<PipelineMessage> messages_of(const pipeline::Schedule& schedule, const pipeline::Timing& timing,
                                         double p2p);

// The phases of one device's op list. Warm-up: the forwards before the first backward. Megatron-LM counts p - r - 1
// of them on rank r in 1F1B (`warmup_forwards`): the next forward opens the steady state and the first backward
// follows it at once; counting that one too gives p - r (`forwards_before_first_backward`). As time bands on the
// lane: the warm-up lasts until the first backward starts (its forwards and the wait for the first gradient), the
// steady state until the last forward ends, the cool-down to the end of the step.
struct DevicePhases {
  int warmup_forwards = 0;
  int forwards_before_first_backward = 0;
  int steady_ops = 0;    // from the first backward to the last forward
  int cooldown_ops = 0;  // after the last forward
  double warmup_end = 0, steady_end = 0, end = 0;
};
std::vector<DevicePhases> device_phases(const pipeline::Schedule& schedule, const pipeline::Timing& timing);

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
// What makes up the waiting overheads of a measured run on this backend ("cpu" or "cuda"), in a few words.
const char* waiting_overheads_cause(const std::string& backend_kind);

// "1F1B (...): p = 4, m = 8" (with v for the interleaved schedule): what a timeline of this shape is called.
std::string shape_title(const pipeline::ScheduleShape& shape);
// The chosen schedule simulated from the parameters alone, named "<shape title> (theory)": what an export without a
// run shows. Throws BadInput as setup_of does.
Timeline theory_timeline(const PipelineParams& params);

}  // namespace dlsys::pipeline_lesson
