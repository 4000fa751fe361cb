// The status line: which backend runs the lessons (and, where CUDA is built in but cannot run, why, in plain words),
// what the last action did (or the keys, when nothing happened lately), and the frame rate.
#include <fmt/format.h>
#include <imgui.h>

#include "app/gui/shell.h"
#include "app/gui/shell_parts.h"
#include "app/gui/theme.h"
#include "engine/backend.h"

namespace dlsys::gui {

namespace {

constexpr double kMessageSeconds = 8.0;
constexpr ImGuiWindowFlags kBarFlags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                       ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus;

// A neutral rounded chip: a fact, not an alarm. Returns whether the mouse is over it.
bool draw_chip(const std::string& text) {
  const float s = ui_scale();
  const ImVec2 pos = ImGui::GetCursorScreenPos();
  const ImVec2 size = ImGui::CalcTextSize(text.c_str());
  const float pad = 6 * s;
  const ImVec2 min{pos.x, pos.y - 1 * s}, max{pos.x + size.x + 2 * pad, pos.y + size.y + 1 * s};
  ImGui::GetWindowDrawList()->AddRectFilled(min, max, info_color(), 8 * s);
  ImGui::SetCursorScreenPos({pos.x + pad, pos.y});
  ImGui::TextUnformatted(text.c_str());
  ImGui::SameLine(0, pad);
  ImGui::Dummy({0, 0});
  return ImGui::IsMouseHoveringRect(min, max);
}

const char* key_hints(bool presentation, float room) {
  const char* full =
      presentation ? "Left / Right: step   Space: play   R: run   F5: desk mode   F6: panels   Ctrl +/-: text "
                     "size   F1: keys"
                   : "Left / Right: step   Space: play   R: run   F5: presentation   Ctrl +/-: text size   F1: keys";
  if (ImGui::CalcTextSize(full).x < room) return full;
  return presentation ? "Left/Right  Space  R  F5  F6: panels  Ctrl+/-  F1: keys"
                      : "Left/Right  Space  R  F5  Ctrl+/-  F1: keys";
}

}  // namespace

void draw_status_bar(AppState& state, float y, float width, float height) {
  ImGui::SetNextWindowPos({0, y});
  ImGui::SetNextWindowSize({width, height});
  ImGui::Begin("status", nullptr, kBarFlags);
  const CudaStatus& cuda = cuda_status();
  // Asked once: the summary reads /proc, which is too slow to repeat every frame.
  static const std::string summary = backend_summary(cuda.available ? BackendKind::Cuda : BackendKind::Cpu);
  if (draw_chip(summary))
    ImGui::SetTooltip("Lessons run on this backend.\nCUDA: %s", cuda.available ? "available" : cuda.reason.c_str());
  // A run opened from a file was measured elsewhere: say so beside this machine's backend, so the chip does not
  // read as the origin of the numbers on screen (hidden with the recorded label, for pixel comparisons).
  const RunResult* shown = state.sessions[state.lesson_index].result.get();
  if (shown != nullptr && !shown->opened_from.empty() && state.show_recorded_label) {
    std::string origin = "showing a run recorded on " + shown->backend.kind;
    if (!shown->backend.device.empty()) origin += " (" + shown->backend.device + ")";
    ImGui::SameLine();
    if (draw_chip(origin)) ImGui::SetTooltip("Opened from %s", shown->opened_from.c_str());
  }
  if (cuda.compiled && !cuda.available && !state.presentation) {
    ImGui::SameLine();
    ImGui::TextDisabled("CUDA cannot run here: %s.", cuda.plain_reason.c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", cuda.reason.c_str());
  }
  ImGui::SameLine();
  const float room = width - ImGui::GetCursorPosX();
  const bool fresh = !state.message.empty() && state.now_s - state.message_s < kMessageSeconds;
  const ImVec4 message_color =
      state.message_is_error ? ImVec4(0.9f, 0.25f, 0.2f, 1) : ImGui::ColorConvertU32ToFloat4(muted_text_color());
  // One line only: what does not fit is cut at the edge and stays readable on hover.
  ImGui::PushClipRect(ImGui::GetCursorScreenPos(), {ImGui::GetCursorScreenPos().x + room, y + height}, true);
  if (fresh)
    ImGui::TextColored(message_color, "%s", state.message.c_str());
  else
    ImGui::TextDisabled("%s", key_hints(state.presentation, room));
  ImGui::PopClipRect();
  if (fresh && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", state.message.c_str());
  ImGui::End();
}

}  // namespace dlsys::gui
