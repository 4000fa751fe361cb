#include <imgui.h>

#include "app/gui/theme.h"
#include "app/views/view.h"

namespace dlsys::gui {

void draw_needs_run(const char* what) {
  ImGui::Spacing();
  ImGui::PushFont(heading_font());
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(highlight_color()), "Press Run to measure %s.", what);
  ImGui::PopFont();
  ImGui::TextDisabled("Runs happen on a worker thread; the window stays responsive and Cancel stops them.");
}

void draw_value_table(const char* id, const std::vector<std::pair<std::string, std::string>>& rows) {
  if (!ImGui::BeginTable(id, 2, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg)) return;
  for (const auto& [label, value] : rows) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(label.c_str());
    ImGui::TableNextColumn();
    ImGui::PushFont(mono_font());
    ImGui::TextUnformatted(value.c_str());
    ImGui::PopFont();
  }
  ImGui::EndTable();
}

}  // namespace dlsys::gui
