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

void draw_columns_table(const char* id, const std::vector<std::string>& headers,
                        const std::vector<std::vector<std::string>>& rows) {
  const int columns = static_cast<int>(headers.size());
  if (columns == 0 || !ImGui::BeginTable(id, columns, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg)) return;
  for (const auto& header : headers) ImGui::TableSetupColumn(header.c_str());
  ImGui::TableHeadersRow();
  for (const auto& row : rows) {
    ImGui::TableNextRow();
    for (int c = 0; c < columns && c < static_cast<int>(row.size()); ++c) {
      ImGui::TableSetColumnIndex(c);
      if (c > 0) ImGui::PushFont(mono_font());
      ImGui::TextUnformatted(row[c].c_str());
      if (c > 0) ImGui::PopFont();
    }
  }
  ImGui::EndTable();
}

}  // namespace dlsys::gui
