// What qualifies a result, drawn beside it: a mark when the run used other parameters than the panel shows now, a
// label on a run opened from a file, a band when other programs competed for the cores, and the run's own notes
// (emulated ranks, replayed schedules, time-shared cores). Each folds to one line (folded_band.h), so the view keeps
// its room: the marks share one line above the view, the notes one line below it (above it, on the marks' line, where
// the window is short of room); hovering shows the whole text and a click keeps it open.
#include <fmt/format.h>
#include <imgui.h>

#include "app/gui/figure_size.h"
#include "app/gui/folded_band.h"
#include "app/gui/shell_parts.h"
#include "app/gui/theme.h"
#include "app/views/view.h"

namespace dlsys::gui {

namespace {

// A band whose line is its whole text.
Band one_line_band(const std::string& text, ImU32 fill, ImU32 edge, const char* name) {
  return {text, text, fill, edge, name, ""};
}

std::string stale_text(const AppState& state) {
  const LessonSession& session = state.sessions[state.lesson_index];
  if (!session.result) return "";
  const std::vector<std::string> changed = params_changed_since(*session.result, session.params);
  if (changed.empty()) return "";
  std::string list;
  for (std::size_t i = 0; i < changed.size() && i < 3; ++i) list += (i ? ", " : "") + changed[i];
  if (changed.size() > 3) list += fmt::format(" and {} more", changed.size() - 3);
  return fmt::format("Measured with other parameters ({}): press Run to measure these.", list);
}

std::string busy_machine_text(const AppState& state) {
  const LessonSession& session = state.sessions[state.lesson_index];
  const RunResult* result = session.result.get();
  if (result == nullptr) return "";
  const Lesson& lesson = current_lesson(state);
  const std::vector<LessonStep>& steps = lesson.text().steps;
  if (session.step < int(steps.size()) && !step_shows_measurement(lesson.id(), steps[session.step].id)) return "";
  return result->backend.conditions.sentence();
}

std::string notes_text(const RunResult& result) {
  const std::vector<std::string>& notes = result.backend.notes;
  std::string text;
  for (std::size_t i = 0; i < notes.size(); ++i) text += (i ? "\n" : "") + notes[i];
  return text;
}

}  // namespace

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

namespace {
std::vector<Band> result_mark_bands(const AppState& state) {
  std::vector<Band> bands;
  if (std::string text = stale_text(state); !text.empty())
    bands.push_back(one_line_band(text, with_alpha(highlight_color(), 0.22f), highlight_color(), "mark/stale"));
  const RunResult* result = state.sessions[state.lesson_index].result.get();
  if (result != nullptr && !result->opened_from.empty() && state.show_recorded_label)
    bands.push_back(one_line_band(recorded_run_label(*result), info_color(), series_color(0), "mark/recorded"));
  if (std::string text = busy_machine_text(state); !text.empty())
    bands.push_back(one_line_band(text, with_alpha(warning_color(), 0.18f), warning_color(), "mark/busy_machine"));
  return bands;
}
}  // namespace

namespace {
// The run's own notes as one band: the first note leads the line, the count of the others says there is more.
std::vector<Band> notes_bands(const AppState& state) {
  const RunResult* result = state.sessions[state.lesson_index].result.get();
  if (result == nullptr || result->backend.notes.empty()) return {};
  const std::vector<std::string>& notes = result->backend.notes;
  const std::string kept =
      notes.size() > 1 ? fmt::format(" (+{} more {})", notes.size() - 1, notes.size() == 2 ? "note" : "notes") : "";
  return {{notes[0], notes_text(*result), info_color(), series_color(0), "run_notes", kept}};
}

// Where the window is short of room the notes join the marks' line above the view, so the view keeps the line.
std::vector<Band> bands_above_view(const AppState& state) {
  std::vector<Band> bands = result_mark_bands(state);
  if (window_is_short())
    for (Band& band : notes_bands(state)) bands.push_back(std::move(band));
  return bands;
}
std::vector<Band> bands_below_view(const AppState& state) {
  return window_is_short() ? std::vector<Band>{} : notes_bands(state);
}
}  // namespace

void draw_result_marks(const AppState& state, float width) { draw_folded_bands(bands_above_view(state), width); }

float result_marks_height(const AppState& state, float width) {
  return folded_bands_height(bands_above_view(state), width);
}

float run_notes_height(const AppState& state, float width) {
  const std::vector<Band> bands = bands_below_view(state);
  // With the item spacing before them (after the view).
  return bands.empty() ? 0 : folded_bands_height(bands, width) + ImGui::GetStyle().ItemSpacing.y;
}

void draw_run_notes(const AppState& state, float width) { draw_folded_bands(bands_below_view(state), width); }

}  // namespace dlsys::gui
