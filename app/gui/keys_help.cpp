// The keys and gestures, listed in a window of their own (F1 or ?): what the status bar can only hint at.
#include <imgui.h>

#include <algorithm>
#include <utility>

#include "app/gui/shell_parts.h"
#include "app/gui/theme.h"
#include "app/gui/widget_rects.h"

namespace dlsys::gui {

namespace {

// What to press or do, and what it does; one list for the window and for nothing else.
const std::pair<const char*, const char*> kKeys[] = {
    {"Left / Right", "previous / next step (one step per press)"},
    {"Next lesson >", "on a lesson's last step, the button goes on to the next lesson"},
    {"Space", "play the steps one after another, or pause"},
    {"R", "run the lesson with the parameters shown"},
    {"P", "pin the run shown, to compare later runs with; again: let go of it"},
    {"C", "compare the run shown with the pinned run (or the one before it), or stop"},
    {"F5", "presentation mode (light theme, large text, no sidebar and parameters) or back"},
    {"F6", "in presentation mode: bring the sidebar and parameters back, or fold them away again"},
    {"Ctrl + =  /  Ctrl + -", "larger / smaller text (1x to 3x)"},
    {"F12", "save a PNG of the window"},
    {"F1  or  ?", "this list; Esc or F1 closes it"},
    {"mouse wheel", "scroll the view"},
    {"Ctrl + wheel on a timeline", "zoom around the pointer"},
    {"drag a timeline", "pan; double-click fits it again"},
    {"hover a plot or a timeline", "the values under the pointer"},
    {"checkbox over ddp's and zero's timelines", "one time axis for every run (off: each fits its own)"},
};

}  // namespace

void toggle_keys_help(AppState& state) { state.show_keys = !state.show_keys; }

void draw_keys_help(AppState& state) {
  if (!state.show_keys) return;
  const ImGuiIO& io = ImGui::GetIO();
  const ImGuiStyle& style = ImGui::GetStyle();
  // As wide as the longest key and the longest description side by side, or 90 % of the window: then both columns
  // wrap (large text in a small window), rather than the descriptions running out of sight.
  float key_w = 0, what_w = 0;
  ImGui::PushFont(heading_font());
  for (const auto& [key, what] : kKeys) key_w = std::max(key_w, ImGui::CalcTextSize(key).x);
  ImGui::PopFont();
  for (const auto& [key, what] : kKeys) what_w = std::max(what_w, ImGui::CalcTextSize(what).x);
  const float natural_w = key_w + what_w + 4 * style.CellPadding.x + 2 * style.WindowPadding.x + style.ScrollbarSize;
  const float width = std::min(natural_w, io.DisplaySize.x * 0.9f);
  ImGui::SetNextWindowPos({io.DisplaySize.x * 0.5f, io.DisplaySize.y * 0.5f}, ImGuiCond_Always, {0.5f, 0.5f});
  ImGui::SetNextWindowSize({width, 0}, ImGuiCond_Always);  // height 0: fitted to the list, up to the constraint
  ImGui::SetNextWindowSizeConstraints({0, 0}, {io.DisplaySize.x * 0.9f, io.DisplaySize.y * 0.9f});
  constexpr ImGuiWindowFlags kFlags = ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings |
                                      ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize;
  ImGui::SetNextWindowFocus();
  if (ImGui::Begin("Keys and gestures", &state.show_keys, kFlags)) {
    if (ImGui::BeginTable("keys", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp)) {
      ImGui::TableSetupColumn("key", ImGuiTableColumnFlags_WidthStretch, key_w);
      ImGui::TableSetupColumn("what", ImGuiTableColumnFlags_WidthStretch, what_w);
      for (const auto& [key, what] : kKeys) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::PushFont(heading_font());
        ImGui::TextWrapped("%s", key);
        ImGui::PopFont();
        ImGui::TableNextColumn();
        ImGui::TextWrapped("%s", what);
      }
      ImGui::EndTable();
    }
  }
  ImGui::End();
  note_last_item("keys_help");
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) state.show_keys = false;
}

}  // namespace dlsys::gui
