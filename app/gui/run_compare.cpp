#include "app/gui/run_compare.h"

#include <fmt/format.h>
#include <imgui.h>

#include "app/gui/shell_parts.h"
#include "app/gui/widget_rects.h"
#include "lessons/run_file.h"

namespace dlsys::gui {

void show_result(LessonSession& session, std::shared_ptr<const RunResult> result) {
  if (session.result && session.result != result) session.previous_result = std::move(session.result);
  session.result = std::move(result);
}

std::shared_ptr<const RunResult> compared_run(const LessonSession& session) {
  if (session.pinned_result && session.pinned_result != session.result) return session.pinned_result;
  return session.previous_result;
}

void refresh_comparison(LessonSession& session, const Lesson& lesson) {
  const std::shared_ptr<const RunResult> b = compared_run(session);
  if (!session.comparing || !session.result || !b) {
    session.comparison.reset();
    return;
  }
  try {
    if (!session.comparison || session.comparison->a != session.result || session.comparison->b != b)
      session.comparison = LessonSession::Comparison{session.result, b, compare_runs(lesson, *session.result, *b),
                                                     recorded_params(lesson, *b)};
    session.compared_step_data.request(lesson, session.comparison->b_params);
  } catch (const std::exception& e) {
    session.comparison.reset();
    session.comparing = false;
    session.last_error = std::string("cannot compare: ") + e.what();
  }
}

namespace {

bool can_pin(const LessonSession& session) { return session.result && session.result != session.pinned_result; }
bool can_compare(const LessonSession& session) { return session.result && compared_run(session); }

}  // namespace

std::string toggle_pin(LessonSession& session) {
  if (can_pin(session)) {
    session.pinned_result = session.result;
    return "pinned this run: later runs can be compared with it (C)";
  }
  if (!session.pinned_result) return "";
  session.pinned_result.reset();
  return "let go of the pinned run";
}

std::string toggle_comparison(LessonSession& session) {
  if (!can_compare(session)) return "";
  session.comparing = !session.comparing;
  return session.comparing ? "comparing two runs" : "comparison off";
}

void draw_compare_controls(AppState& state) {
  LessonSession& session = state.session();
  ImGui::BeginDisabled(!can_pin(session));
  if (ImGui::Button("Pin this run")) session.pinned_result = session.result;
  ImGui::EndDisabled();
  note_last_item("compare/pin");
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("Keep this run (live, or opened from a file) to compare later runs with");
  if (session.pinned_result) {
    ImGui::SameLine();
    if (ImGui::Button("Unpin")) session.pinned_result.reset();
    note_last_item("compare/unpin");
  }
  const std::shared_ptr<const RunResult> b = compared_run(session);
  const bool pinned = b && b == session.pinned_result;
  ImGui::BeginDisabled(!can_compare(session));
  bool on = session.comparing && b != nullptr;
  const char* label = pinned ? "Compare with pinned###compare" : "Compare with previous###compare";
  if (ImGui::Checkbox(label, &on)) session.comparing = on;
  ImGui::EndDisabled();
  note_last_item("compare/toggle");
  ImGui::PushTextWrapPos(0);
  if (b)
    ImGui::TextDisabled("%s", fmt::format("{} run: {}", pinned ? "pinned" : "previous", compared_run_name(*b)).c_str());
  else
    ImGui::TextDisabled("Pin a run, or run again, to compare two runs side by side.");
  ImGui::PopTextWrapPos();
}

}  // namespace dlsys::gui
