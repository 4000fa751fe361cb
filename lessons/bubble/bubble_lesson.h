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
  // check_params and check_run: also a sweep with no m the schedule can run; before a run, also the memory of the
  // sweep's largest m.
  DLSYS_LESSON_OVERRIDES(params, check_params, check_run, budget_of, step_data_of, run_with, text_report)
};

}  // namespace dlsys
