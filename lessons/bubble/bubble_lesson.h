#pragma once
#include "lessons/pipeline_common/pipeline_typed_lesson.h"

namespace dlsys {

// Lesson `bubble`: why a pipeline idles, the corrected formula (p-1)/(m+p-1), and the measured bubble for m = 1..32.
class BubbleLesson final : public pipeline_lesson::PipelineTypedLesson {
 public:
  std::string id() const override { return "bubble"; }
  std::vector<std::string> quick_params() const override {
    // Ops of about a millisecond (the default sizes): shorter ones measure thread wake-ups, not the schedule.
    return {"repeats=3", "sweep=1,2,4,8"};
  }
  std::vector<ParamSpec> params() const override;
  // Also a sweep with no m the schedule can run; before a run, also the memory of the sweep's largest m.
  void check_params(const pipeline_lesson::PipelineParams& params, BackendKind backend) const override;
  void check_run(const pipeline_lesson::PipelineParams& params, BackendKind backend) const override;
  RunBudget budget_of(const pipeline_lesson::PipelineParams& params, BackendKind backend) const override;
  std::shared_ptr<const pipeline_lesson::PipelineSteps> step_data_of(
      const pipeline_lesson::PipelineParams& params) const override;
  RunResult run_with(const pipeline_lesson::PipelineParams& params, RunContext& context) const override;
  std::string text_report(const RunResult& result) const override;
};

}  // namespace dlsys
