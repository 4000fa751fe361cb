#include "lessons/schedules/schedules_lesson.h"

#include "lessons/common/run_time_limit.h"
#include "lessons/pipeline_common/pipeline_lesson.h"
#include "lessons/pipeline_common/pipeline_steps.h"

namespace dlsys {

std::vector<ParamSpec> SchedulesLesson::params() const {
  return pipeline_lesson::param_specs({.schedule = "1f1b", .p = 4, .m = 8});
}

void SchedulesLesson::validate(const ParamValues& params, BackendKind) const { pipeline_lesson::read_setup(params); }

void SchedulesLesson::check_run_resources(const ParamValues& params, BackendKind backend) const {
  const pipeline_lesson::Setup setup = pipeline_lesson::read_setup(params);
  pipeline_lesson::check_backend(setup, backend);
  pipeline_lesson::check_host_memory(setup);
  if (backend == BackendKind::Cpu)
    refuse_if_longer_than_limit(params, pipeline_lesson::cpu_run_seconds(setup, setup.shape.micro_batches),
                                pipeline_lesson::cpu_run_work(setup), "hidden, microbatch, m, p or repeats");
}

std::shared_ptr<const LessonValues> SchedulesLesson::theory(const ParamValues& params) const {
  return make_values(pipeline_lesson::theory(params));
}

RunResult SchedulesLesson::run(RunContext& context) const {
  RunResult result = pipeline_lesson::run(*this, context);
  context.control.progress(1.0, "done");
  return result;
}

std::string SchedulesLesson::text_report(const RunResult& result) const {
  return pipeline_lesson::comparison_table(*result.theory_as<pipeline_lesson::PipelineTheory>()) +
         pipeline_lesson::measurement_report(result);
}

std::vector<Timeline> SchedulesLesson::theory_timelines(const ParamValues& params) const {
  return {pipeline_lesson::theory_timeline(params)};
}

std::shared_ptr<const StepData> SchedulesLesson::step_data(const ParamValues& params) const {
  return pipeline_lesson::make_pipeline_steps(*this, params, true);
}

}  // namespace dlsys
