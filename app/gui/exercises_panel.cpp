// The lesson's exercises beside its parameters: the question with the session's parameter values, a field for the
// prediction (or a button per choice), and once checked the prediction, the closed form's answer and, from the last
// run when it was made with these parameters, the number this machine measured.
#include <fmt/format.h>
#include <imgui.h>
#include <imgui_stdlib.h>

#include "app/gui/shell_parts.h"
#include "app/gui/theme.h"
#include "app/gui/widget_rects.h"
#include "lessons/common/exercises.h"

namespace dlsys::gui {

namespace {

// The lesson's checked values: the last run's measurements too, when the run was made with the panel's parameters.
ExerciseValues values_for(const Lesson& lesson, const LessonSession& session) {
  const bool fresh = session.result && params_changed_since(*session.result, session.params).empty();
  return exercise_values(lesson, session.params, fresh ? session.result.get() : nullptr);
}

// Checks the prediction and counts the answer in the student's progress (a prediction that cannot be read is not an
// answer).
void check(AppState& state, const LessonExercise& exercise, ExerciseAttempt& attempt, const std::string& typed) {
  const Lesson& lesson = current_lesson(state);
  try {
    attempt.check = check_prediction(exercise, read_prediction(exercise, typed), values_for(lesson, state.session()));
    attempt.error.clear();
    if (state.record_progress) record_exercise_answer(state.progress, lesson.id(), exercise.id, attempt.check->right);
  } catch (const std::exception& e) {
    attempt.check.reset();
    attempt.error = e.what();
  }
}

void draw_outcome(const LessonExercise& exercise, const ExerciseAttempt& attempt) {
  if (!attempt.error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, error_text_color());
    ImGui::TextWrapped("%s", attempt.error.c_str());
    ImGui::PopStyleColor();
  }
  if (!attempt.check) return;
  const ExerciseCheck& c = *attempt.check;
  ImGui::Text("You: %s", format_answer(exercise, c.prediction).c_str());
  ImGui::Text("Closed form: %s", format_answer(exercise, c.answer).c_str());
  if (c.measured)
    ImGui::Text("This machine: %s", format_answer(exercise, *c.measured).c_str());
  else if (!exercise.measured.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("This machine: run the lesson with these parameters (R) to measure it");
    ImGui::PopStyleColor();
  }
  ImGui::PushStyleColor(ImGuiCol_Text, c.right ? ImGui::GetStyleColorVec4(ImGuiCol_Text) : error_text_color());
  ImGui::TextWrapped("%s", c.verdict.c_str());
  ImGui::PopStyleColor();
  note_last_item("exercise/" + exercise.id + "/verdict");
}

}  // namespace

void draw_exercises(AppState& state) {
  LessonSession& session = state.session();
  const std::vector<LessonExercise>& exercises = current_lesson(state).text().exercises;
  for (std::size_t i = 0; i < exercises.size(); ++i) {
    const LessonExercise& exercise = exercises[i];
    ExerciseAttempt& attempt = session.exercises[exercise.id];
    ImGui::PushID(exercise.id.c_str());
    if (i > 0) ImGui::Separator();
    ImGui::PushFont(heading_font());
    ImGui::TextWrapped("%zu. %s", i + 1, exercise.title.c_str());
    ImGui::PopFont();
    ImGui::TextWrapped("%s", question_with_values(exercise, session.params).c_str());
    if (!exercise.choices.empty()) {
      for (std::size_t c = 0; c < exercise.choices.size(); ++c) {
        if (c > 0) ImGui::SameLine();
        if (ImGui::Button(exercise.choices[c].c_str())) check(state, exercise, attempt, exercise.choices[c]);
        note_last_item("exercise/" + exercise.id + "/choice/" + exercise.choices[c]);
      }
    } else {
      const std::string hint = exercise.unit.empty() ? "a number" : exercise.unit;
      ImGui::SetNextItemWidth(-button_width("Check") - ImGui::GetStyle().ItemSpacing.x);
      const bool entered =
          ImGui::InputTextWithHint("##answer", hint.c_str(), &attempt.input, ImGuiInputTextFlags_EnterReturnsTrue);
      note_last_item("exercise/" + exercise.id + "/answer");
      ImGui::SameLine();
      const bool clicked = ImGui::Button("Check");
      note_last_item("exercise/" + exercise.id + "/check");
      if (entered || clicked) check(state, exercise, attempt, attempt.input);
    }
    draw_outcome(exercise, attempt);
    ImGui::PopID();
  }
}

}  // namespace dlsys::gui
