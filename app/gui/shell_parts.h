#pragma once
// The pieces the shell is made of, each drawn by its own function; shell.cpp arranges them for the space there is.
#include <nlohmann/json.hpp>
#include <string>

#include "app/gui/app_state.h"
#include "lessons/common/lesson.h"
#include "lessons/common/progress.h"

namespace dlsys::gui {

const Lesson& current_lesson(const AppState& state);
void go_to_step(AppState& state, int step);
void toggle_play(AppState& state);
void toggle_presentation(AppState& state);
// Asks for another lesson; the switch happens between frames (begin_frame), never halfway through drawing one.
void request_lesson(AppState& state, int index);

// Width of a button with this label, and of several side by side.
float button_width(const std::string& label);
float buttons_width(std::initializer_list<std::string> labels);
// Moves the cursor so a group `width` wide ends at the right edge of the content region when it fits after what is
// already on this line; otherwise starts a new line. Returns true when it stayed on the same line.
bool place_right_aligned(float width);

// Navigation: the lesson list (sidebar, or a drop-down where there is no room for one) and the step controls.
void draw_sidebar(AppState& state, float width, float height);
void draw_lesson_menu(AppState& state);
float lesson_menu_width(const AppState& state);
void draw_step_buttons(AppState& state);
float step_buttons_width(const AppState& state);
// The step's title on one line of `width`, cut where it does not fit, whole on hover.
void draw_step_title(const AppState& state, float width);

// Run / Cancel with the progress of a run going on.
void draw_run_controls(AppState& state);
float run_controls_width(const AppState& state);
// The presentation toggle and the export menu.
void draw_mode_and_export(AppState& state);
float mode_and_export_width(const AppState& state);

// Writes the lesson, its step and its parameters as a state file in the output folder (what `--open FILE` and "Open
// lesson state..." read back); the status bar says where.
void save_lesson_state(AppState& state);

// A student's progress (shell_progress.cpp). The lesson's counts from state.progress.
LessonProgressSummary lesson_progress(const AppState& state, const Lesson& lesson);
// Records the step on screen as seen, and forgets the place to continue from once the window shows it.
void note_step_shown(AppState& state);
// The line under a lesson's title in the list ("4/7 steps, 2 runs", a check mark when done): its height in `width`,
// 0 for a lesson not started, and the line drawn with its top left at `pos`.
float progress_line_height(const LessonProgressSummary& summary, float width);
void draw_progress_line(const LessonProgressSummary& summary, ImVec2 pos, float width);
// The sidebar's head: "Continue: <lesson>, step N" where there is a place to continue from, and the lesson menu
// (continue, save and open lesson states, reset progress).
void draw_sidebar_actions(AppState& state);
// The lesson menu's items; the lesson drop-down ends with them too, where there is no sidebar.
void draw_lesson_actions(AppState& state);
// The confirmation before progress is reset; drawn every frame, outside the other windows.
void draw_progress_dialogs(AppState& state);
// Every started lesson's counts and the place to continue from, for the state summary of --widget-rects.
nlohmann::json progress_summary_json(const AppState& state);

// The controls column: parameters, backend choice, last run, theory card.
void draw_parameters(AppState& state);
void draw_run_summary(AppState& state);
void draw_theory(const AppState& state);
// The lesson's exercises: predict, check, and see the closed form and this machine's number (exercises_panel.cpp).
void draw_exercises(AppState& state);

// The keys and gestures in a window over the page (F1 or ?; Esc, F1 or its close button hides it).
void toggle_keys_help(AppState& state);
void draw_keys_help(AppState& state);

// The line at the bottom: backend chip, what just happened (or the keys), frame rate.
void draw_status_bar(AppState& state, float y, float width, float height);

// Above the view, in one line of `width` they share, cut to fit with the whole text on hover or a click: a mark when
// the last run used other parameters; where and when a run opened from a file was recorded (until the next run
// replaces it); and, on steps that show a measurement, one sentence when other programs competed for the cores.
void draw_result_marks(const AppState& state, float width);
std::string recorded_run_label(const RunResult& result);
float result_marks_height(const AppState& state, float width);
// Below the view: the run's own notes, folded into one line (the first note and how many more; all on hover); on the
// marks' line instead where the window is short of room. The height the notes take under the view, with the spacing
// around them.
float run_notes_height(const AppState& state, float width);
void draw_run_notes(const AppState& state, float width);

}  // namespace dlsys::gui
