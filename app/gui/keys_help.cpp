// The keys and gestures, listed in a window of their own (F1 or ?): what the status bar can only hint at.
#include <imgui.h>

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
  ImGui::SetNextWindowPos({io.DisplaySize.x * 0.5f, io.DisplaySize.y * 0.5f}, ImGuiCond_Always, {0.5f, 0.5f});
  ImGui::SetNextWindowSizeConstraints({0, 0}, {io.DisplaySize.x * 0.9f, io.DisplaySize.y * 0.9f});
  constexpr ImGuiWindowFlags kFlags = ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoCollapse |
                                      ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoMove;
  ImGui::SetNextWindowFocus();
  if (ImGui::Begin("Keys and gestures", &state.show_keys, kFlags)) {
    if (ImGui::BeginTable("keys", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit)) {
      for (const auto& [key, what] : kKeys) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::PushFont(heading_font());
        ImGui::TextUnformatted(key);
        ImGui::PopFont();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(what);
      }
      ImGui::EndTable();
    }
  }
  ImGui::End();
  note_last_item("keys_help");
  if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) state.show_keys = false;
}

}  // namespace dlsys::gui
