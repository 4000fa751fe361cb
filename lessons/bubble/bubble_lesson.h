#pragma once
#include "lessons/common/typed_lesson.h"
#include "lessons/pipeline_common/pipeline_values.h"

namespace dlsys {

// Lesson `bubble`: why a pipeline idles, the corrected formula (p-1)/(m+p-1), and the measured bubble for m = 1..32.
class BubbleLesson final : public LessonWithValues<pipeline_lesson::PipelineTheory, pipeline_lesson::PipelineMeasured> {
 public:
  std::string id() const override { return "bubble"; }
  std::vector<std::string> quick_params() const override {
    // Ops of about a millisecond (the default sizes): shorter ones measure thread wake-ups, not the schedule.
    return {"repeats=3", "sweep=1,2,4,8"};
  }
  std::string chapter() const override { return "Pipeline parallelism"; }
  std::vector<ParamSpec> params() const override;
  void validate(const ParamValues& params, BackendKind backend) const override;
  void check_run_resources(const ParamValues& params, BackendKind backend) const override;
  std::shared_ptr<const LessonValues> theory(const ParamValues& params) const override;
  std::shared_ptr<const StepData> step_data(const ParamValues& params) const override;
  RunResult run(RunContext& context) const override;
  bool has_timeline() const override { return true; }
  std::vector<Timeline> theory_timelines(const ParamValues& params) const override;
  std::string text_report(const RunResult& result) const override;
};

}  // namespace dlsys
