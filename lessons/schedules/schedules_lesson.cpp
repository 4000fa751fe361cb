#include "lessons/schedules/schedules_lesson.h"

#include "lessons/common/run_time_limit.h"
#include "lessons/pipeline_common/pipeline_lesson.h"

namespace dlsys {

using pipeline_lesson::PipelineParams;

std::vector<ParamSpec> SchedulesLesson::params() const {
  return pipeline_lesson::param_specs({.schedule = "1f1b", .p = 4, .m = 8});
}

RunBudget SchedulesLesson::budget_of(const PipelineParams& params, BackendKind backend) const {
  if (backend != BackendKind::Cpu) return {};
  const pipeline_lesson::Setup setup = pipeline_lesson::setup_of(params);
  return {.cpu_seconds = pipeline_lesson::cpu_run_seconds(setup, setup.shape.micro_batches),
          .max_minutes = params.max_minutes,
          .cpu_work = pipeline_lesson::cpu_run_work(setup),
          .smaller = "hidden, microbatch, m, p or repeats"};
}

RunResult SchedulesLesson::run_with(const PipelineParams& params, RunContext& context) const {
  RunPlan plan(context.control, pipeline_lesson::setup_of(params).shape.micro_batches);
  RunResult result = pipeline_lesson::run(*this, params, context, plan);
  plan.finish();
  return result;
}

std::string SchedulesLesson::text_report(const RunResult& result) const {
  return pipeline_lesson::comparison_table(*result.theory_as<pipeline_lesson::PipelineTheory>()) +
         pipeline_lesson::measurement_report(result);
}

std::shared_ptr<const pipeline_lesson::PipelineSteps> SchedulesLesson::step_data_of(
    const PipelineParams& params) const {
  return pipeline_lesson::make_pipeline_steps(params, true);
}

}  // namespace dlsys
