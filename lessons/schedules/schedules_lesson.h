#pragma once
#include "lessons/pipeline_common/pipeline_typed_lesson.h"

namespace dlsys {

// Lesson `schedules`: 1F1B, interleaved, zero bubble and DualPipe on one real pipeline, with the comparison table.
class SchedulesLesson final : public pipeline_lesson::PipelineTypedLesson {
 public:
  std::string id() const override { return "schedules"; }
  // Ops of about a millisecond (the default sizes): shorter ones measure thread wake-ups, not the schedule.
  std::vector<std::string> quick_params() const override { return {"repeats=3"}; }
  DLSYS_LESSON_OVERRIDES(params, budget_of, step_data_of, run_with, text_report)
};

}  // namespace dlsys
