// What qualifies a result, drawn beside it: a mark when the run used other parameters than the panel shows now, a
// label on a run opened from a file, a band when other programs competed for the cores, and the run's own notes
// (emulated ranks, replayed schedules, time-shared cores). Each takes one line at most, so the view keeps its room:
// the marks share one line above the view, the notes one line below it, and hovering shows the whole text.
#include <fmt/format.h>
#include <imgui.h>

#include "app/gui/fit_text.h"
#include "app/gui/shell_parts.h"
#include "app/gui/theme.h"
#include "app/gui/widget_rects.h"
#include "app/views/view.h"

namespace dlsys::gui {

namespace {

// One folded band: the line it shows (cut with "..." where it does not fit, `kept` always after it), the whole text
// shown on hover, and its colours.
struct Band {
  std::string line;
  std::string whole;
  ImU32 fill = 0;
  ImU32 edge = 0;
  std::string name;  // for --widget-rects
  std::string kept;  // "(+2 more notes)"
};

float band_height() { return ImGui::GetTextLineHeight() + 8 * ui_scale(); }

// The bands side by side in one line of `width`, each cut to its share, the whole text on hover.
void draw_folded_bands(const std::vector<Band>& bands, float width) {
  if (bands.empty()) return;
  const float s = ui_scale(), pad = 8 * s, gap = 4 * s, h = band_height();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float share = (width - gap * float(bands.size() - 1)) / float(bands.size());
  ImDrawList* draw = ImGui::GetWindowDrawList();
  for (std::size_t i = 0; i < bands.size(); ++i) {
    const Band& band = bands[i];
    const ImVec2 a{origin.x + float(i) * (share + gap), origin.y}, b{a.x + share, a.y + h};
    draw->AddRectFilled(a, b, band.fill, 3 * s);
    draw->AddRectFilled(a, {a.x + 3 * s, b.y}, band.edge);
    const std::string shown = fitted_text(band.line, band.kept, share - 2 * pad);
    draw->PushClipRect(a, b, true);
    draw->AddText({a.x + pad, a.y + 4 * s}, text_color(), shown.c_str());
    draw->PopClipRect();
    ImGui::SetCursorScreenPos(a);
    ImGui::InvisibleButton(band.name.c_str(), {share, h});
    note_last_item(band.name);
    if (shown != band.whole && ImGui::IsItemHovered()) {
      ImGui::BeginTooltip();
      ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40);
      ImGui::TextUnformatted(band.whole.c_str());
      ImGui::PopTextWrapPos();
      ImGui::EndTooltip();
    }
  }
  ImGui::SetCursorScreenPos({origin.x, origin.y + h + 4 * s});
  ImGui::Dummy({0, 0});
}

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

void draw_result_marks(const AppState& state, float width) { draw_folded_bands(result_mark_bands(state), width); }

float result_marks_height(const AppState& state) {
  return result_mark_bands(state).empty() ? 0 : band_height() + 4 * ui_scale() + ImGui::GetStyle().ItemSpacing.y;
}

float run_notes_height(const AppState& state) {
  const RunResult* result = state.sessions[state.lesson_index].result.get();
  // The band, and the item spacing before it (after the view) and after it.
  return result == nullptr || result->backend.notes.empty()
             ? 0
             : band_height() + 4 * ui_scale() + 2 * ImGui::GetStyle().ItemSpacing.y;
}

void draw_run_notes(const AppState& state, float width) {
  const RunResult* result = state.sessions[state.lesson_index].result.get();
  if (result == nullptr || result->backend.notes.empty()) return;
  const std::vector<std::string>& notes = result->backend.notes;
  // The first note leads the line; the count of the others says there is more to hover.
  const std::string kept =
      notes.size() > 1 ? fmt::format(" (+{} more {})", notes.size() - 1, notes.size() == 2 ? "note" : "notes") : "";
  draw_folded_bands({{notes[0], notes_text(*result), info_color(), series_color(0), "run_notes", kept}}, width);
}

}  // namespace dlsys::gui
