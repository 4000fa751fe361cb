#pragma once
#include "lessons/common/typed_lesson.h"
#include "lessons/pipeline_common/pipeline_params.h"
#include "lessons/pipeline_common/pipeline_steps.h"
#include "lessons/pipeline_common/pipeline_values.h"

namespace dlsys {

// Lesson `bubble`: why a pipeline idles, the corrected formula (p-1)/(m+p-1), and the measured bubble for m = 1..32.
class BubbleLesson final : public TypedLesson<pipeline_lesson::PipelineParams, pipeline_lesson::PipelineTheory,
                                              pipeline_lesson::PipelineMeasured, pipeline_lesson::PipelineSteps> {
 public:
  std::string id() const override { return "bubble"; }
  std::vector<std::string> quick_params() const override {
    // Ops of about a millisecond (the default sizes): shorter ones measure thread wake-ups, not the schedule.
    return {"repeats=3", "sweep=1,2,4,8"};
  }
  std::string chapter() const override { return "Pipeline parallelism"; }
  std::vector<ParamSpec> params() const override;
  pipeline_lesson::PipelineParams read_params(const ParamValues& values) const override;
  pipeline_lesson::PipelineTheory theory_of(const pipeline_lesson::PipelineParams& params) const override;
  void check_params(const pipeline_lesson::PipelineParams& params, BackendKind backend) const override;
  // The simulated schedule exports without a run: the cores, memory and time of a run are refused before one only.
  bool budget_only_before_run() const override { return true; }
  void check_run(const pipeline_lesson::PipelineParams& params, BackendKind backend) const override;
  RunBudget budget_of(const pipeline_lesson::PipelineParams& params, BackendKind backend) const override;
  std::shared_ptr<const pipeline_lesson::PipelineSteps> step_data_of(
      const pipeline_lesson::PipelineParams& params) const override;
  RunResult run_with(const pipeline_lesson::PipelineParams& params, RunContext& context) const override;
  bool has_timeline() const override { return true; }
  std::vector<Timeline> theory_timelines(const ParamValues& values) const override;
  std::string text_report(const RunResult& result) const override;
};

}  // namespace dlsys
