#pragma once
#include "lessons/allreduce/allreduce_params.h"
#include "lessons/allreduce/allreduce_steps.h"
#include "lessons/allreduce/allreduce_values.h"
#include "lessons/common/typed_lesson.h"

namespace dlsys {

// Lesson `allreduce` (T11): why gradients need an all-reduce, the ring (reduce-scatter + all-gather) step by step
// with its own record, its cost 2(N-1)/N x S per rank, and measured bus bandwidth against the copy ceiling.
class AllreduceLesson final : public TypedLesson<allreduce::AllreduceParams, allreduce::AllreduceTheory,
                                                 allreduce::AllreduceMeasured, allreduce::AllreduceSteps> {
 public:
  std::string id() const override { return "allreduce"; }
  std::vector<std::string> quick_params() const override {
    return {"n=4", "bytes=1MiB", "sizes=1KiB..1MiB", "repeats=1"};
  }
  std::string chapter() const override { return "Distributed training"; }
  DLSYS_LESSON_OVERRIDES(params, read_params, theory_of, check_params, budget_of, step_data_of, run_with, text_report)
  std::vector<std::string> process_launch_params(int world_size, bool quick) const override;
  // A run whose ranks were processes (launcher=mpi) measured other values (mpi_values.h): its "measured" names the
  // launcher.
  void read_values(const nlohmann::ordered_json& theory, const nlohmann::ordered_json& measured,
                   RunResult& result) const override;
};

// The collective's cost at the parameters' size, from the closed forms.
allreduce::AllreduceTheory allreduce_theory(const allreduce::AllreduceParams& params);

}  // namespace dlsys
