// A student's progress on screen: the line under each lesson in the list, the place to continue from, and the lesson
// menu with the state files and the reset of progress. The counts themselves live in lessons/common/progress.h.
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <vector>

#include "app/gui/fit_text.h"
#include "app/gui/settings.h"
#include "app/gui/shell.h"
#include "app/gui/shell_parts.h"
#include "app/gui/theme.h"
#include "app/gui/widget_rects.h"
#include "lessons/registry.h"

namespace dlsys::gui {

namespace {

constexpr const char* kResetTitle = "Reset progress?";

std::vector<std::string> step_ids(const Lesson& lesson) {
  std::vector<std::string> ids;
  for (const LessonStep& step : lesson.text().steps) ids.push_back(step.id);
  return ids;
}

std::vector<std::string> exercise_ids(const Lesson& lesson) {
  std::vector<std::string> ids;
  for (const LessonExercise& exercise : lesson.text().exercises) ids.push_back(exercise.id);
  return ids;
}

// Room for the check mark (a line high) and a gap before the line of a finished lesson.
float mark_width(const LessonProgressSummary& summary) {
  return summary.complete() ? 1.3f * ImGui::GetTextLineHeight() : 0;
}

void draw_check_mark(ImDrawList* draw, ImVec2 pos, float size, ImU32 color) {
  const ImVec2 points[] = {{pos.x + 0.15f * size, pos.y + 0.55f * size},
                           {pos.x + 0.4f * size, pos.y + 0.8f * size},
                           {pos.x + 0.85f * size, pos.y + 0.2f * size}};
  draw->AddPolyline(points, 3, color, ImDrawFlags_None, std::max(1.5f, 0.12f * size));
}

bool showing(const AppState& state, const LessonState& place) {
  return all_lessons()[state.lesson_index] == place.lesson && state.sessions[state.lesson_index].step == place.step;
}

}  // namespace

LessonProgressSummary lesson_progress(const AppState& state, const Lesson& lesson) {
  return summarize_progress(state.progress, lesson.id(), step_ids(lesson), exercise_ids(lesson));
}

void note_step_shown(AppState& state) {
  if (state.continue_from && showing(state, *state.continue_from)) state.continue_from.reset();
  if (!state.record_progress) return;
  const Lesson& lesson = current_lesson(state);
  const int step = state.session().step;
  if (step < static_cast<int>(lesson.step_count()))
    record_step_visit(state.progress, lesson.id(), lesson.text().steps[step].id);
}

float progress_line_height(const LessonProgressSummary& summary, float width) {
  if (!summary.started()) return 0;
  return ImGui::CalcTextSize(progress_line(summary).c_str(), nullptr, false, width - mark_width(summary)).y;
}

void draw_progress_line(const LessonProgressSummary& summary, ImVec2 pos, float width) {
  if (!summary.started()) return;
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const float mark_w = mark_width(summary);
  if (summary.complete()) draw_check_mark(draw, pos, ImGui::GetTextLineHeight(), series_color(2));
  draw->AddText(ImGui::GetFont(), ImGui::GetFontSize(), {pos.x + mark_w, pos.y}, muted_text_color(),
                progress_line(summary).c_str(), nullptr, width - mark_w);
}

void draw_lesson_actions(AppState& state) {
  if (state.continue_from) {
    if (ImGui::MenuItem(("Continue: " + place_label(*state.continue_from)).c_str())) continue_where_left_off(state);
    note_last_item("progress/menu_continue");
  }
  if (ImGui::MenuItem("Save lesson state")) save_lesson_state(state);
  note_last_item("progress/save_state");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Writes this lesson, its step and its parameters to a file in %s.\nHand it out: it opens with "
        "\"Open lesson state...\" or dlsys-lab --open FILE.",
        output_dir().c_str());
  if (ImGui::MenuItem("Open lesson state...")) state.show_open_dialog = true;  // the picker opens between menus
  note_last_item("progress/open_state");
  ImGui::Separator();
  if (ImGui::MenuItem("Reset progress...")) state.show_reset_progress = true;
  note_last_item("progress/reset");
}

void draw_sidebar_actions(AppState& state) {
  const float width = ImGui::GetContentRegionAvail().x;
  if (state.continue_from) {
    const std::string label = "Continue: " + place_label(*state.continue_from);
    const std::string shown = fitted_text(label, "", width - 2 * ImGui::GetStyle().FramePadding.x);
    if (ImGui::Button((shown + "###continue").c_str(), {width, 0})) continue_where_left_off(state);
    note_last_item("progress/continue");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s, where the last session stopped", label.c_str());
  }
  if (ImGui::Button("Lesson menu", {width, 0})) ImGui::OpenPopup("lesson_actions");
  note_last_item("progress/menu");
  if (ImGui::BeginPopup("lesson_actions")) {
    draw_lesson_actions(state);
    ImGui::EndPopup();
  }
}

void draw_progress_dialogs(AppState& state) {
  if (state.show_reset_progress) {
    ImGui::OpenPopup(kResetTitle);
    state.show_reset_progress = false;
  }
  if (!ImGui::BeginPopupModal(kResetTitle, nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30);
  ImGui::TextUnformatted(
      "This forgets the steps seen, the runs finished and the exercise answers of every lesson. The lessons' "
      "parameters, saved lesson states and exports stay.");
  ImGui::TextDisabled("%s", progress_path().c_str());
  ImGui::PopTextWrapPos();
  if (ImGui::Button("Reset progress")) {
    reset_progress(state);
    ImGui::CloseCurrentPopup();
  }
  note_last_item("progress/reset_confirm");
  ImGui::SameLine();
  if (ImGui::Button("Cancel") || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false))
    ImGui::CloseCurrentPopup();
  note_last_item("progress/reset_cancel");
  ImGui::EndPopup();
}

nlohmann::json progress_summary_json(const AppState& state) {
  nlohmann::json lessons = nlohmann::json::object();
  for (const Lesson* lesson : all_lessons()) {
    const LessonProgressSummary summary = lesson_progress(state, *lesson);
    if (!summary.started()) continue;
    lessons[lesson->id()] = {{"steps_visited", summary.steps_visited},
                             {"steps", summary.step_count},
                             {"runs_finished", summary.runs_finished},
                             {"exercises", summary.exercise_count},
                             {"exercises_answered", summary.exercises_answered},
                             {"exercises_right", summary.exercises_right},
                             {"complete", summary.complete()}};
  }
  nlohmann::json continue_from = nullptr;
  if (state.continue_from)
    continue_from = {{"lesson", state.continue_from->lesson->id()}, {"step", state.continue_from->step + 1}};
  return {{"lessons", lessons}, {"continue_from", continue_from}};
}

}  // namespace dlsys::gui
