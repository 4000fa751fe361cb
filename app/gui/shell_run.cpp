// Acting on a lesson: Run / Cancel with progress, the presentation toggle, and the export menu.
#include <fmt/format.h>
#include <imgui.h>

#include "app/export/timeline_export.h"
#include "app/gui/file_picker.h"
#include "app/gui/settings.h"
#include "app/gui/shell.h"
#include "app/gui/shell_parts.h"
#include "app/gui/theme.h"
#include "app/gui/widget_rects.h"
#include "engine/errors.h"
#include "engine/file_io.h"
#include "engine/json_io.h"
#include "lessons/common/state_file.h"

namespace dlsys::gui {

namespace {

std::string run_label(const AppState& state) {
  if (!state.worker.busy()) return "Run (R)";
  return state.worker.running_lesson() == current_lesson(state).id() ? "Cancel" : "Cancel the other run";
}

float progress_width() { return 180 * ui_scale(); }

void write_export(AppState& state, const std::string& path, const std::string& bytes) {
  try {
    write_file_checked(path, bytes);
    report_written(state, path);
  } catch (const RunFailure& e) {
    set_message(state, e.what(), true);
  }
}

// The lesson's timelines as SVG or Chrome trace: the run's when there is one, else simulated from the panel's
// parameters (a click, not a frame: the simulation runs once, here).
void export_timelines(AppState& state, const Lesson& lesson, const RunResult* result, const ParamValues& params,
                      bool trace) {
  std::vector<Timeline> timelines;
  try {
    timelines = result != nullptr ? result->timelines : lesson.theory_timelines(params);
  } catch (const BadInput& e) {
    set_message(state, e.what(), true);
    return;
  }
  if (trace) {
    write_export(state, timestamped_output_path(lesson.id() + "-trace", "json"), timelines_to_chrome_trace(timelines));
    return;
  }
  const std::string subtitle = timeline_export_subtitle(lesson.title(), result != nullptr ? &result->backend : nullptr);
  write_export(state, timestamped_output_path(lesson.id() + "-timeline", "svg"),
               timelines_to_svg(timelines, timeline_export_title(timelines), subtitle));
}

}  // namespace

void save_lesson_state(AppState& state) {
  const Lesson& lesson = current_lesson(state);
  const LessonSession& session = state.session();
  const std::string path = timestamped_output_path(lesson.id() + "-state", "json");
  try {
    save_state_file(path, lesson.id(), session.step, session.params);
    report_written(state, path);
  } catch (const std::exception& e) {
    set_message(state, e.what(), true);
  }
}

float run_controls_width(const AppState& state) {
  float width = button_width(run_label(state));
  if (state.worker.busy()) width += ImGui::GetStyle().ItemSpacing.x + progress_width();
  return width;
}

void draw_run_controls(AppState& state) {
  const bool busy = state.worker.busy();
  if (ImGui::Button((run_label(state) + "###run").c_str())) busy ? state.worker.cancel() : start_run(state);
  note_last_item(busy ? "cancel" : "run");
  if (!busy) return;
  ImGui::SameLine();
  const std::string text = fmt::format("{:.0f}%  {}", 100 * state.worker.progress(), state.worker.progress_text());
  ImGui::ProgressBar(static_cast<float>(state.worker.progress()), {progress_width(), 0}, text.c_str());
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", text.c_str());
}

float mode_and_export_width(const AppState& state) {
  return buttons_width({state.presentation ? "Desk mode (F5)" : "Presentation (F5)", "Export"});
}

void draw_mode_and_export(AppState& state) {
  if (ImGui::Button(state.presentation ? "Desk mode (F5)###mode" : "Presentation (F5)###mode"))
    toggle_presentation(state);
  note_last_item("mode");
  ImGui::SameLine();
  const Lesson& lesson = current_lesson(state);
  const LessonSession& session = state.session();
  if (ImGui::Button("Export")) ImGui::OpenPopup("export");
  note_last_item("export");
  if (ImGui::BeginPopup("export")) {
    if (ImGui::MenuItem("Window as PNG", "F12")) state.want_window_png = true;
    note_last_item("export/window_png");
    for (int scale : {1, 2, 4}) {
      if (ImGui::MenuItem(fmt::format("Figure (the view alone) at {}x", scale).c_str()))
        state.want_figure_scale = scale;
      note_last_item(fmt::format("export/figure_{}x", scale));
    }
    ImGui::MenuItem("Title on figures", nullptr, &state.figure_title);
    note_last_item("export/figure_title");
    ImGui::BeginDisabled(state.presentation);  // presentation mode draws its figures light already
    ImGui::MenuItem("Figures in the light theme (slides, print)", nullptr, &state.figure_light);
    ImGui::EndDisabled();
    note_last_item("export/figure_light");
    ImGui::Separator();
    const RunResult* result = session.result.get();
    ImGui::BeginDisabled(result == nullptr);
    if (ImGui::MenuItem("Last run as CSV"))
      write_export(state, timestamped_output_path(lesson.id(), "csv"), to_csv(*result));
    note_last_item("export/csv");
    if (ImGui::MenuItem("Last run as JSON"))
      write_export(state, timestamped_output_path(lesson.id(), "json"), dump_json_text(to_json(*result), 2) + "\n");
    note_last_item("export/json");
    ImGui::EndDisabled();
    if (lesson.has_timeline()) {
      // With a run: its measured timelines beside their theory. Before one: the simulated schedule alone.
      const bool measured = result != nullptr && !result->timelines.empty();
      const char* what = measured ? "measured and theory" : "theory only, no run yet";
      if (ImGui::MenuItem(fmt::format("Timelines as SVG ({})", what).c_str()))
        export_timelines(state, lesson, measured ? result : nullptr, session.params, false);
      note_last_item("export/svg");
      if (ImGui::MenuItem(fmt::format("Timelines as Chrome trace for Perfetto ({})", what).c_str()))
        export_timelines(state, lesson, measured ? result : nullptr, session.params, true);
      note_last_item("export/trace");
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Save lesson state")) save_lesson_state(state);
    note_last_item("export/save_state");
    if (ImGui::MenuItem("Open lesson state...")) state.show_open_dialog = true;
    note_last_item("export/open_state");
    if (ImGui::MenuItem("Open recorded run...")) state.show_open_run_dialog = true;
    note_last_item("export/open_run");
    ImGui::EndPopup();
  }
  // The picker opens outside the menu popup, which has closed by now.
  static FilePicker picker;
  if (state.show_open_dialog) {
    open_file_picker("Open lesson state", picker, output_dir(), ".json");
    state.show_open_dialog = false;
  }
  std::string chosen;
  if (draw_file_picker("Open lesson state", picker, chosen))
    state.pending_state_file = chosen;  // opened between frames
  static FilePicker run_picker;
  if (state.show_open_run_dialog) {
    open_file_picker("Open recorded run", run_picker, output_dir(), ".json");
    state.show_open_run_dialog = false;
  }
  if (draw_file_picker("Open recorded run", run_picker, chosen)) state.pending_run_file = chosen;
}

}  // namespace dlsys::gui
