#pragma once
// A small file browser (ImGui has none and no dialog library is packaged here): folders first, then the files whose
// name ends with the wanted extension; click a folder to enter it, a file to pick it, or type a path.
#include <string>

namespace dlsys::gui {

struct FilePicker {
  std::string folder;     // the folder shown
  std::string extension;  // ".json"; empty: every file
  std::string typed;      // the path field
};

// Opens the popup `id` in `start_folder` (or the folder of `start_path` when it names a file).
void open_file_picker(const char* id, FilePicker& picker, const std::string& start_path, const std::string& extension);
// Draws the popup if open; returns true once, with `chosen` set, when the user picked a file.
bool draw_file_picker(const char* id, FilePicker& picker, std::string& chosen);

}  // namespace dlsys::gui
