#include "app/views/wide_tables.h"

#include <imgui.h>

#include "app/views/view.h"

namespace dlsys::gui {

namespace {

// A child as tall as `lines` table rows plus room for a horizontal scrollbar.
bool begin_wide(const char* id, std::size_t lines) {
  const ImGuiStyle& style = ImGui::GetStyle();
  const float row = ImGui::GetTextLineHeight() + 2 * style.CellPadding.y;
  const float height = float(lines) * row + style.ScrollbarSize + 2 * style.WindowPadding.y;
  return ImGui::BeginChild(id, {0, height}, false, ImGuiWindowFlags_HorizontalScrollbar);
}

}  // namespace

void draw_wide_columns_table(const char* id, const std::vector<std::string>& headers,
                             const std::vector<std::vector<std::string>>& rows) {
  if (begin_wide(id, rows.size() + 1)) draw_columns_table(id, headers, rows);
  ImGui::EndChild();
}

void draw_wide_value_table(const char* id, const std::vector<std::pair<std::string, std::string>>& rows) {
  if (begin_wide(id, rows.size())) draw_value_table(id, rows);
  ImGui::EndChild();
}

}  // namespace dlsys::gui
