#pragma once
#include "kernels/zero/sharded_training.h"
#include "lessons/common/typed_lesson.h"
#include "lessons/zero/zero_params.h"
#include "lessons/zero/zero_steps.h"
#include "lessons/zero/zero_values.h"

namespace dlsys {

// Lesson `zero` (T12, T6): where the memory of mixed-precision Adam training goes (2 + 2 + 12 bytes a parameter), DDP
// replicating all of it, ZeRO's stages 1-3 sharding optimizer states, gradients and weights over N ranks, the exact
// reduction factors beside the lecture's "4x, 8x, Nx", and a calculator; run for real on CPU rank threads that train
// the residual MLP stack at every stage with the lab's ring collectives and a memory ledger per rank.
class ZeroLesson final : public TypedLesson<zero_lesson::ZeroParams, zero_lesson::ZeroTheory, zero_lesson::ZeroMeasured,
                                            zero_lesson::ZeroSteps> {
 public:
  std::string id() const override { return "zero"; }
  std::vector<std::string> quick_params() const override { return {"layers=4", "width=64", "rows=4", "steps=2"}; }
  std::string chapter() const override { return "Distributed training"; }
  // theory_of: the closed forms at the parameters: the calculator's model (mode = theory) or the lab's stack
  // (mode = run).
  DLSYS_LESSON_OVERRIDES(params, read_params, theory_of, check_params, budget_of, step_data_of, run_with, text_report)
  bool has_timeline() const override { return true; }
  // One step's operations in order at each stage, in cost units (no run): what `export` writes without --run.
  std::vector<Timeline> theory_timelines(const ParamValues& params) const override;
};

// The run's configuration at `stage` from the parameters.
zero::ZeroConfig zero_config(const zero_lesson::ZeroParams& params, int stage);
// The N the run sweeps with one step per stage: 1, 2, 4, 8, 16 and the chosen N, those that shard the layers evenly.
std::vector<int> zero_swept_ranks(const zero_lesson::ZeroParams& params);
// One step's operations in order at each stage 0-3, in cost units, from the parameters alone.
std::vector<Timeline> zero_op_order(const zero_lesson::ZeroParams& params);
// Seconds a run takes on CPU rank threads: every stage at the chosen N for `steps` steps, then one step per stage at
// each swept N; per training, 6 FLOP per weight and row on every rank at kBlasGflopsPerThread, and
// kZeroSecondsPerParameterPass for every parameter of every rank at each step and once more at its set-up (the
// gathers, reduce-scatters, Adam's update and the fp32 master copy are passes over memory, whatever the rows). Fitted
// to the CPU time of 7 runs on a 2-core EPYC (width 128 to 512, rows 4 to 256, N 4 and 8): within 10%.
double zero_cpu_run_seconds(const zero_lesson::ZeroParams& params);
inline constexpr double kZeroSecondsPerParameterPass = 6e-9;

}  // namespace dlsys
