#include "lessons/pipeline_common/pipeline_values.h"

namespace dlsys::pipeline_lesson {

namespace {
// A schedule that is not available has only its name, title and why; the others have all their numbers.
DLSYS_VALUES_PART(ComparisonHead, ScheduleComparison, schedule, title, available)
DLSYS_VALUES_PART(ComparisonWhyNot, ScheduleComparison, why)
DLSYS_VALUES_PART(ComparisonNumbers, ScheduleComparison, devices, stages, chunk, param_copies, formula, formula_source,
                  bubble_formula, bubble_simulated, bubble_fraction_formula, bubble_fraction_simulated,
                  bubble_ratio_formula, bubble_ratio_simulated, makespan, stage_fb, bubble_stage_fb_formula,
                  bubble_stage_fb_simulated, peak_inflight, peak_activation_stage_units)
}  // namespace

void to_json(nlohmann::ordered_json& j, const ScheduleComparison& e) {
  ComparisonHead::write(j, e);
  if (e.available)
    ComparisonNumbers::write(j, e);
  else
    ComparisonWhyNot::write(j, e);
}

void from_json(const nlohmann::ordered_json& j, ScheduleComparison& e) {
  ComparisonHead::read(j, e);
  if (e.available)
    ComparisonNumbers::read(j, e);
  else
    ComparisonWhyNot::read(j, e);
}

}  // namespace dlsys::pipeline_lesson
