#pragma once
#include <vector>

#include "kernels/ddp/trainer.h"
#include "lessons/common/typed_lesson.h"
#include "lessons/ddp/ddp_params.h"
#include "lessons/ddp/ddp_steps.h"
#include "lessons/ddp/ddp_values.h"

namespace dlsys {

// Lesson `ddp` (T10, T20): the batch split, nn.DataParallel against DistributedDataParallel, gradient buckets
// all-reduced during backward, accumulation and 16-bit gradients, trained for real on CPU rank threads with the lab's
// ring all-reduce.
class DdpLesson final : public TypedLesson<ddp::DdpParams, ddp::DdpTheory, ddp::DdpMeasured, ddp::DdpSteps> {
 public:
  std::string id() const override { return "ddp"; }
  std::vector<std::string> quick_params() const override {
    // The default width and batch: at width 256 the backward was too short for its buckets to overlap it.
    return {"layers=4", "steps=2"};
  }
  std::vector<std::string> process_launch_params(int world_size, bool quick) const override;
  std::string chapter() const override { return "Distributed training"; }
  DLSYS_LESSON_OVERRIDES(params, read_params, theory_of, check_params, check_run, budget_of, step_data_of, run_with,
                         text_report)
  // The simulated steps export without a run: a run's memory and time are refused before one only.
  bool budget_only_before_run() const override { return true; }
  bool has_timeline() const override { return true; }
  std::vector<Timeline> theory_timelines(const ParamValues& values) const override;
};

// The chosen configuration as the trainer takes it (steps: the timed ones plus one untimed first step).
ddp::TrainConfig ddp_config(const ddp::DdpParams& params);
ddp::DdpTheory ddp_theory(const ddp::DdpParams& params);
// One DDP step at the chosen bucket and with one bucket, simulated from assumed rates (kernels/ddp/simulate.h).
std::vector<Timeline> ddp_theory_timelines(const ddp::DdpParams& params);

// Every configuration a run trains besides the chosen one, in order: the variants (wire formats, accumulation,
// DataParallel), the bucket sweep, the sweep over N in both modes, and the benchmark's configuration. On the CUDA
// backend only DDP with fp32 gradients: no 16-bit wires and no DataParallel. With launcher=mpi none: the processes
// train the chosen configuration alone.
struct PlannedRun {
  ddp::TrainConfig config;
  const char* purpose;  // "variant", "bucket sweep", "ranks sweep", "benchmark"
};
std::vector<PlannedRun> ddp_run_plan(const ddp::DdpParams& params, BackendKind backend = BackendKind::Cpu);

// Seconds a run on CPU rank threads takes: every configuration it trains (the chosen one and the plan) and the
// single-rank reference, each step's 12 B w^2 L FLOP at kDdpGflops, and kDdpSecondsPerParameterPass for every
// parameter of every rank's replica at each step and once more at its set-up (gradients zeroed, the ring or the
// master's copies, the update: passes over memory that do not shrink with the batch). Fitted to the CPU time of 8
// runs on a 2-core EPYC (width 128 to 1024, batch 16 to 256, N 2 and 4): within 15%.
double ddp_cpu_run_seconds(const ddp::DdpParams& params);
inline constexpr double kDdpGflops = 90;
inline constexpr double kDdpSecondsPerParameterPass = 3.5e-9;

// The benchmark: N = 2, buckets of a quarter of the gradient, fp32, at least half the communication hidden.
inline constexpr double kOverlapExpected = 0.5;
inline constexpr int kBenchRanks = 2;
inline constexpr int kBenchTimedSteps = 8;

}  // namespace dlsys
