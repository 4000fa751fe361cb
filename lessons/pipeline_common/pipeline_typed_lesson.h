#pragma once
// What the `bubble` and `schedules` lessons declare alike: their parameters, theory, measured values and step data,
// the checks across the parameters, what a run needs, and the simulated timeline. Each lesson adds its specs, its
// budget, its steps, its run and its report.
#include <vector>

#include "lessons/common/typed_lesson.h"
#include "lessons/pipeline_common/pipeline_lesson.h"
#include "lessons/pipeline_common/pipeline_params.h"
#include "lessons/pipeline_common/pipeline_steps.h"
#include "lessons/pipeline_common/pipeline_values.h"

namespace dlsys::pipeline_lesson {

class PipelineTypedLesson : public TypedLesson<PipelineParams, PipelineTheory, PipelineMeasured, PipelineSteps> {
 public:
  std::string chapter() const override { return "Pipeline parallelism"; }
  PipelineParams read_params(const ParamValues& values) const override { return read_pipeline_params(values); }
  PipelineTheory theory_of(const PipelineParams& params) const override { return pipeline_lesson::theory_of(params); }
  void check_params(const PipelineParams& params, BackendKind) const override { setup_of(params); }
  // The simulated schedule exports without a run: the cores, memory and time of a run are refused before one only.
  bool budget_only_before_run() const override { return true; }
  void check_run(const PipelineParams& params, BackendKind backend) const override {
    const Setup setup = setup_of(params);
    check_backend(setup, backend);
    check_host_memory(setup);
  }
  bool has_timeline() const override { return true; }
  std::vector<Timeline> theory_timelines(const ParamValues& values) const override {
    return {theory_timeline(read_params(values))};
  }
};

}  // namespace dlsys::pipeline_lesson
