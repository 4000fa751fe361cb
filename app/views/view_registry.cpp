// The one table from lesson id to its step views.
#include "app/views/view.h"

namespace dlsys::gui {

const StepViews& matmul_step_views();
const StepViews& kvcache_step_views();
const StepViews& flash_step_views();
const StepViews& bubble_step_views();
const StepViews& schedules_step_views();
const StepViews& allreduce_step_views();
const StepViews& tensor_step_views();
const StepViews& ddp_step_views();
const StepViews& roofline_step_views();
const StepViews& fusion_step_views();
const StepViews& hardware_step_views();
const StepViews& precision_step_views();
const StepViews& quant_step_views();
const StepViews& serving_step_views();
const StepViews& zero_step_views();
const StepViews& moe_step_views();
const StepViews& checkpointing_step_views();
const StepViews& lora_step_views();
const StepViews& mesh_step_views();

const StepViews* find_step_views(const std::string& lesson_id) {
  struct Entry {
    const char* lesson_id;
    const StepViews& (*views)();
  };
  static const Entry table[] = {
      {"matmul", matmul_step_views},
      {"kvcache", kvcache_step_views},
      {"flash", flash_step_views},
      {"bubble", bubble_step_views},
      {"schedules", schedules_step_views},
      {"allreduce", allreduce_step_views},
      {"roofline", roofline_step_views},
      {"fusion", fusion_step_views},
      {"tensor", tensor_step_views},
      {"precision", precision_step_views},
      {"quant", quant_step_views},
      {"serving", serving_step_views},
      {"zero", zero_step_views},
      {"moe", moe_step_views},
      {"ddp", ddp_step_views},
      {"checkpointing", checkpointing_step_views},
      {"lora", lora_step_views},
      {"hardware", hardware_step_views},
      {"mesh", mesh_step_views},
  };
  for (const auto& entry : table)
    if (lesson_id == entry.lesson_id) return &entry.views();
  return nullptr;
}

namespace {
const StepViewEntry* find_entry(const std::string& lesson_id, const std::string& step_id) {
  if (const StepViews* views = find_step_views(lesson_id))
    for (const StepViewEntry& entry : *views)
      if (step_id == entry.step_id) return &entry;
  return nullptr;
}
}  // namespace

StepView find_step_view(const std::string& lesson_id, const std::string& step_id) {
  const StepViewEntry* entry = find_entry(lesson_id, step_id);
  return entry ? entry->draw : nullptr;
}

bool step_shows_measurement(const std::string& lesson_id, const std::string& step_id) {
  const StepViewEntry* entry = find_entry(lesson_id, step_id);
  return entry == nullptr || entry->shows == StepShows::Measurement;
}

CompareLayout step_compare_layout(const std::string& lesson_id, const std::string& step_id) {
  const StepViewEntry* entry = find_entry(lesson_id, step_id);
  return entry == nullptr ? CompareLayout::SideBySide : entry->compare;
}

}  // namespace dlsys::gui
