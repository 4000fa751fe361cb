#include "app/gui/figure_size.h"

#include <imgui.h>

#include <algorithm>

#include "app/gui/theme.h"

namespace dlsys::gui {

namespace {
float g_view_height = 1e9f;  // no cap until the shell says how tall the view is
}  // namespace

void set_view_height(float points) { g_view_height = std::max(points, 1.0f); }
float view_height() { return g_view_height; }
float within_view_height(float height) { return std::min(height, g_view_height); }
bool window_is_short() { return ImGui::GetIO().DisplaySize.y < kShortWindowPoints * ui_scale(); }

}  // namespace dlsys::gui
