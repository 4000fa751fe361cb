// What qualifies a result, drawn beside it: a mark when the run used other parameters than the panel shows now,
// and the run's own notes (emulated ranks, replayed schedules, time-shared cores) in an information style.
#include <fmt/format.h>
#include <imgui.h>

#include "app/gui/shell_parts.h"
#include "app/gui/theme.h"
#include "app/views/view.h"

namespace dlsys::gui {

namespace {

constexpr int kMaxNotesShown = 3;
// The band never takes more than this share of the window's height: at large text in a small window a long note
// would otherwise hide the view it qualifies. Notes that do not fit are left to the exported JSON.
constexpr float kMaxNotesShareOfWindow = 0.2f;

std::string notes_text(const RunResult& result, int shown) {
  std::string text;
  for (int i = 0; i < shown; ++i) text += (i ? "\n" : "") + result.backend.notes[i];
  if (static_cast<int>(result.backend.notes.size()) > shown)
    text += fmt::format("\n(+{} more notes in the exported JSON)", result.backend.notes.size() - shown);
  return text;
}

float text_height(const std::string& text, float width) {
  return ImGui::CalcTextSize(text.c_str(), nullptr, false, width - 16 * ui_scale()).y + 12 * ui_scale();
}

// The first notes, as many as fit the band's height at this width (the first always).
std::string notes_text(const RunResult& result, float width) {
  const float max_height = kMaxNotesShareOfWindow * ImGui::GetIO().DisplaySize.y;
  int shown = std::min<int>(kMaxNotesShown, static_cast<int>(result.backend.notes.size()));
  while (shown > 1 && text_height(notes_text(result, shown), width) > max_height) --shown;
  return notes_text(result, shown);
}

// A filled band with a coloured edge and wrapped text; returns its height.
float draw_band(const std::string& text, ImU32 fill, ImU32 edge, float width) {
  const float s = ui_scale();
  const ImVec2 pos = ImGui::GetCursorScreenPos();
  const float pad = 8 * s;
  const float h = ImGui::CalcTextSize(text.c_str(), nullptr, false, width - 2 * pad).y + pad;
  ImDrawList* draw = ImGui::GetWindowDrawList();
  draw->AddRectFilled(pos, {pos.x + width, pos.y + h}, fill, 3 * s);
  draw->AddRectFilled(pos, {pos.x + 3 * s, pos.y + h}, edge);
  ImGui::SetCursorScreenPos({pos.x + pad, pos.y + pad / 2});
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width - 2 * pad);
  ImGui::TextUnformatted(text.c_str());
  ImGui::PopTextWrapPos();
  ImGui::SetCursorScreenPos({pos.x, pos.y + h + 4 * s});
  return h;
}

}  // namespace

void draw_stale_mark(const AppState& state) {
  const LessonSession& session = state.sessions[state.lesson_index];
  if (!session.result) return;
  const std::vector<std::string> changed = params_changed_since(*session.result, session.params);
  if (changed.empty()) return;
  std::string list;
  for (std::size_t i = 0; i < changed.size() && i < 3; ++i) list += (i ? ", " : "") + changed[i];
  if (changed.size() > 3) list += fmt::format(" and {} more", changed.size() - 3);
  draw_band(fmt::format("The measured results below come from the last run, made with other parameters ({}). "
                        "Press Run to measure these.",
                        list),
            with_alpha(highlight_color(), 0.22f), highlight_color(), ImGui::GetContentRegionAvail().x);
}

std::string recorded_run_label(const RunResult& result) {
  std::string where = result.backend.kind;
  if (!result.backend.device.empty()) where += " on " + result.backend.device;
  std::string text = "Recorded run: " + where;
  if (result.recorded) {
    const RunRecord& r = *result.recorded;
    // "2026-11-23T01:12:05Z" -> "2026-11-23 01:12 UTC"
    const std::string when =
        r.date_utc.size() >= 16 ? r.date_utc.substr(0, 10) + " " + r.date_utc.substr(11, 5) + " UTC" : r.date_utc;
    text += fmt::format(", host {}, {}, dlsys-lab {}", r.host, when, r.lab_version);
  }
  return text + ". Run measures this machine and replaces it.";
}

void draw_recorded_run_mark(const AppState& state) {
  const RunResult* result = state.sessions[state.lesson_index].result.get();
  if (result == nullptr || result->opened_from.empty() || !state.show_recorded_label) return;
  draw_band(recorded_run_label(*result), info_color(), series_color(0), ImGui::GetContentRegionAvail().x);
}

void draw_busy_machine_mark(const AppState& state) {
  const LessonSession& session = state.sessions[state.lesson_index];
  const RunResult* result = session.result.get();
  if (result == nullptr) return;
  const Lesson& lesson = current_lesson(state);
  const std::vector<LessonStep>& steps = lesson.text().steps;
  if (session.step < int(steps.size()) && !step_shows_measurement(lesson.id(), steps[session.step].id)) return;
  const std::string sentence = result->backend.conditions.sentence();
  if (sentence.empty()) return;
  draw_band(sentence, with_alpha(warning_color(), 0.18f), warning_color(), ImGui::GetContentRegionAvail().x);
}

float run_notes_height(const AppState& state, float width) {
  const RunResult* result = state.sessions[state.lesson_index].result.get();
  if (result == nullptr || result->backend.notes.empty()) return 0;
  return text_height(notes_text(*result, width), width);
}

void draw_run_notes(const AppState& state, float width) {
  const RunResult* result = state.sessions[state.lesson_index].result.get();
  if (result == nullptr || result->backend.notes.empty()) return;
  draw_band(notes_text(*result, width), info_color(), series_color(0), width);
}

}  // namespace dlsys::gui
