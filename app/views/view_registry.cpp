// The one table from lesson id to its view function.
#include "app/views/view.h"

namespace dlsys::gui {

void draw_matmul_view(ViewContext& context);
void draw_kvcache_view(ViewContext& context);
void draw_flash_view(ViewContext& context);
void draw_bubble_view(ViewContext& context);
void draw_schedules_view(ViewContext& context);
void draw_allreduce_view(ViewContext& context);

LessonView find_lesson_view(const std::string& lesson_id) {
  struct Entry {
    const char* id;
    LessonView view;
  };
  static const Entry table[] = {
      {"matmul", draw_matmul_view},
      {"kvcache", draw_kvcache_view},
      {"flash", draw_flash_view},
      {"bubble", draw_bubble_view},
      {"schedules", draw_schedules_view},
      {"allreduce", draw_allreduce_view},
  };
  for (const auto& entry : table)
    if (lesson_id == entry.id) return entry.view;
  return nullptr;
}

}  // namespace dlsys::gui
