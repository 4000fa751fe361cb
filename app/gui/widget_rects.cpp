#include "app/gui/widget_rects.h"

#include <fmt/format.h>

#include <cstdio>
#include <fstream>

#include "app/gui/theme.h"

namespace dlsys::gui {

namespace {
std::string g_path;
nlohmann::json g_widgets = nlohmann::json::object();
nlohmann::json g_plots = nlohmann::json::array();

nlohmann::json rect_json(ImVec2 min, ImVec2 max) { return {min.x, min.y, max.x, max.y}; }
}  // namespace

void enable_widget_rects(const std::string& path) { g_path = path; }
bool widget_rects_enabled() { return !g_path.empty(); }

void begin_widget_frame() {
  if (g_path.empty()) return;
  g_widgets = nlohmann::json::object();
  g_plots = nlohmann::json::array();
}

void note_last_item(const std::string& name) {
  if (g_path.empty()) return;
  g_widgets[name] = rect_json(ImGui::GetItemRectMin(), ImGui::GetItemRectMax());
}

void note_plot_area(const std::string& title, ImVec2 min, ImVec2 max, const std::vector<ImU32>& colors,
                    ImVec2 frame_min, ImVec2 frame_max, bool text_rows) {
  if (g_path.empty()) return;
  nlohmann::json hex = nlohmann::json::array();
  for (ImU32 c : colors)  // ImU32 is ABGR: write RRGGBB as image tools read it; translucent colours blend, skip them
    if ((c >> IM_COL32_A_SHIFT & 0xff) == 0xff)
      hex.push_back(fmt::format("{:02x}{:02x}{:02x}", c & 0xff, (c >> 8) & 0xff, (c >> 16) & 0xff));
  g_plots.push_back({{"title", title},
                     {"rect", rect_json(min, max)},
                     {"frame", rect_json(frame_min, frame_max)},
                     {"colors", hex},
                     {"text_rows", text_rows},
                     {"text_scale", ui_scale()}});
}

void write_widget_rects(const nlohmann::json& state) {
  if (g_path.empty()) return;
  nlohmann::json doc = state;
  doc["widgets"] = g_widgets;
  doc["plots"] = g_plots;
  std::string text = doc.dump(1);
  const std::string temp = g_path + ".tmp";
  {
    std::ofstream file(temp, std::ios::binary);
    file << text;
    if (!file.flush()) return;  // the test waiting for this file reports the missing update
  }
  std::rename(temp.c_str(), g_path.c_str());
}

}  // namespace dlsys::gui
