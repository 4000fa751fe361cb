#pragma once
#include "lessons/common/typed_lesson.h"
#include "lessons/pipeline_common/pipeline_values.h"

namespace dlsys {

// Lesson `schedules`: 1F1B, interleaved, zero bubble and DualPipe on one real pipeline, with the comparison table.
class SchedulesLesson final
    : public LessonWithValues<pipeline_lesson::PipelineTheory, pipeline_lesson::PipelineMeasured> {
 public:
  std::string id() const override { return "schedules"; }
  // Ops of about a millisecond (the default sizes): shorter ones measure thread wake-ups, not the schedule.
  std::vector<std::string> quick_params() const override { return {"repeats=3"}; }
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
