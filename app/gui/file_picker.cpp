#include "app/gui/file_picker.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "app/gui/theme.h"
#include "app/gui/widget_rects.h"

namespace dlsys::gui {

namespace fs = std::filesystem;

namespace {
struct Entry {
  std::string name;
  bool folder = false;
};

std::vector<Entry> list_folder(const std::string& folder, const std::string& extension) {
  std::vector<Entry> entries;
  std::error_code ec;
  for (const auto& item : fs::directory_iterator(folder, fs::directory_options::skip_permission_denied, ec)) {
    const std::string name = item.path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    const bool folder_entry = item.is_directory(ec);
    if (!folder_entry && !extension.empty() && item.path().extension() != extension) continue;
    entries.push_back({name, folder_entry});
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.folder != b.folder ? a.folder : a.name < b.name; });
  return entries;
}
}  // namespace

void open_file_picker(const char* id, FilePicker& picker, const std::string& start_path, const std::string& extension) {
  std::error_code ec;
  fs::path start = start_path.empty() ? fs::current_path(ec) : fs::path(start_path);
  if (!fs::is_directory(start, ec)) start = start.parent_path();
  if (start.empty() || !fs::is_directory(start, ec)) start = fs::current_path(ec);
  picker.folder = fs::absolute(start, ec).lexically_normal().string();
  picker.extension = extension;
  picker.typed = start_path;
  ImGui::OpenPopup(id);
}

bool draw_file_picker(const char* id, FilePicker& picker, std::string& chosen) {
  bool picked = false;
  const float s = ui_scale();
  ImGui::SetNextWindowSize({640 * s, 460 * s}, ImGuiCond_Appearing);
  if (!ImGui::BeginPopupModal(id, nullptr)) return false;
  ImGui::TextDisabled("%s", picker.folder.c_str());
  if (ImGui::Button("Up")) picker.folder = fs::path(picker.folder).parent_path().string();
  ImGui::SameLine();
  if (ImGui::Button("Home")) {
    if (const char* home = std::getenv("HOME")) picker.folder = home;
  }
  ImGui::BeginChild("entries", {0, -2.2f * ImGui::GetFrameHeightWithSpacing()}, true);
  for (const Entry& entry : list_folder(picker.folder, picker.extension)) {
    const std::string label = (entry.folder ? "[dir]  " : "       ") + entry.name;
    if (ImGui::Selectable(label.c_str(), false, ImGuiSelectableFlags_DontClosePopups)) {
      const std::string path = (fs::path(picker.folder) / entry.name).string();
      if (entry.folder) {
        picker.folder = path;
      } else {
        chosen = path;
        picked = true;
      }
    }
  }
  ImGui::EndChild();
  ImGui::SetNextItemWidth(-90 * s);
  const bool enter = ImGui::InputText("##path", &picker.typed, ImGuiInputTextFlags_EnterReturnsTrue);
  note_last_item("picker/path");
  ImGui::SameLine();
  const bool open = ImGui::Button("Open");
  note_last_item("picker/open");
  if ((open || enter) && !picker.typed.empty()) {
    std::error_code ec;
    if (fs::is_directory(picker.typed, ec)) {
      picker.folder = picker.typed;
    } else {
      chosen = picker.typed;  // the caller reports a missing or malformed file by name
      picked = true;
    }
  }
  const bool cancel = ImGui::Button("Cancel");
  note_last_item("picker/cancel");
  if (cancel || picked) ImGui::CloseCurrentPopup();
  ImGui::EndPopup();
  return picked;
}

}  // namespace dlsys::gui
