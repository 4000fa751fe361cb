#pragma once
#include "lessons/common/typed_lesson.h"
#include "lessons/moe/moe_params.h"
#include "lessons/moe/moe_steps.h"
#include "lessons/moe/moe_values.h"

namespace dlsys {

// Lesson `moe` (T16, E5): a mixture-of-experts layer on expert-parallel CPU ranks (threads, or MPI processes; on
// --backend cuda rank threads whose experts run on GPU 0). A top-k
// router with a capacity per expert (dropped tokens counted) and Switch Transformer's balance loss; the tokens
// dispatched to the ranks holding their experts and combined back by real all-to-all exchanges, measured phase by phase
// and byte by byte beside an all-reduce of the same tensor; the output checked against a single-rank reference; the
// dense MLP of the same active parameters timed beside it; and one micro-batch's all-to-all overlapped with another's
// experts.
class MoeLesson final
    : public TypedLesson<moe_lesson::MoeParams, moe_lesson::MoeTheory, moe_lesson::MoeMeasured, moe_lesson::MoeSteps> {
 public:
  std::string id() const override { return "moe"; }
  std::string chapter() const override { return "Distributed training"; }
  std::vector<std::string> quick_params() const override { return {"tokens=512", "repeats=3"}; }
  // Ranks as processes (launcher=mpi): one rank per process, so `ranks` is the world size.
  std::vector<std::string> process_launch_params(int world_size, bool quick) const override;
  DLSYS_LESSON_OVERRIDES(params, read_params, theory_of, check_params, budget_of, step_data_of, run_with, text_report)
  // On --backend cuda the experts' MLPs (and the dense MLP) run on cuBLAS on GPU 0; the rank threads, the router and
  // the all-to-alls stay on the CPU.
  bool runs_on_cuda() const override { return true; }
};

// FLOP of a run: per forward, every rank's tokens through k experts and the router; the reference, the dense MLP
// and two micro-batches twice (in sequence, overlapped), each warmed up once and timed `repeats` times; and the
// router's training when the balance loss is on.
double moe_run_flop(const moe_lesson::MoeParams& params);

}  // namespace dlsys
