#pragma once
// The app shell: sidebar of lessons, the lesson page (step-through, caption, theory card, parameters, run bar,
// the lesson's view) and the status bar; presentation mode hides the chrome and enlarges everything.
#include "app/gui/app_state.h"

namespace dlsys::gui {

// One session per lesson with default parameters; an optional lesson id and step to start on.
void init_sessions(AppState& state);
// Carries out what the last frame asked for (another lesson, a state file) and advances a playing lesson.
// Call before handle_keys and draw_shell.
void begin_frame(AppState& state);
// Draws the whole window (call between ImGui::NewFrame and ImGui::Render).
void draw_shell(AppState& state);
// Draws only the current lesson view (with its title when asked, without its widgets), filling the window: used for
// figure exports.
void draw_view_only(AppState& state);
// Keyboard: Left/Right/Space step, F5 presentation, Ctrl+= / Ctrl+- text scale, F12 screenshot, F1 or ? the keys.
void handle_keys(AppState& state);
// Collects a finished run from the worker, if any.
void poll_worker(AppState& state);
// Shows the outcome of an action in the status bar for a few seconds.
void set_message(AppState& state, std::string text, bool is_error);
// Records a file this session wrote and says so in the status bar.
void report_written(AppState& state, const std::string& path, const std::string& detail = "");
// Starts a run of the current lesson with its parameters.
void start_run(AppState& state);

}  // namespace dlsys::gui
