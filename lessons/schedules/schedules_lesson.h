#pragma once
#include "lessons/pipeline_common/pipeline_typed_lesson.h"

namespace dlsys {

// Lesson `schedules`: 1F1B, interleaved, zero bubble and DualPipe on one real pipeline, with the comparison table.
class SchedulesLesson final : public pipeline_lesson::PipelineTypedLesson {
 public:
  std::string id() const override { return "schedules"; }
  // Ops of about a millisecond (the default sizes): shorter ones measure thread wake-ups, not the schedule.
  std::vector<std::string> quick_params() const override { return {"repeats=3"}; }
  std::vector<ParamSpec> params() const override;
  RunBudget budget_of(const pipeline_lesson::PipelineParams& params, BackendKind backend) const override;
  std::shared_ptr<const pipeline_lesson::PipelineSteps> step_data_of(
      const pipeline_lesson::PipelineParams& params) const override;
  RunResult run_with(const pipeline_lesson::PipelineParams& params, RunContext& context) const override;
  std::string text_report(const RunResult& result) const override;
};

}  // namespace dlsys
