#pragma once
// Where the GUI keeps its files: settings under the XDG config folder, exports and saved states under the user's
// folder of choice ($DLSYS_LAB_OUT, else ~/dlsys-lab).
#include <string>

#include "app/gui/app_state.h"

namespace dlsys::gui {

// $XDG_CONFIG_HOME/dlsys-lab (or ~/.config/dlsys-lab), created if missing.
std::string config_dir();
// $DLSYS_LAB_OUT or ~/dlsys-lab, created if missing.
std::string output_dir();
// "<output_dir>/<stem>-YYYYmmdd-HHMMSS.<ext>", with -2, -3, ... before the extension when that file exists.
std::string timestamped_output_path(const std::string& stem, const std::string& ext);

// Reads a state file (lessons/common/state_file.h) into `state`: selects the lesson, sets step and parameters. Throws
// BadInput naming what was wrong (not JSON, unknown lesson, bad parameter, step out of range).
void open_state_file(const std::string& path, AppState& state);
// Reads a run file (lessons/run_file.h) into `state`: selects its lesson, sets the panel's parameters to the run's and
// shows the run as the lesson's last result, as if it had just been made here. Throws BadInput (bad file, unknown
// lesson, a parameter this build does not know).
void open_run_file(const std::string& path, AppState& state);
// The same for a run already read (a run file's, checked by read_run_file).
void show_recorded_run(std::shared_ptr<const RunResult> result, AppState& state);

// The lesson, step and parameters the window showed when it closed, kept as a state file in config_dir(), so the next
// launch that names no lesson, state or run starts where the last one stopped.
std::string last_state_path();
// Throws RunFailure when the file cannot be written.
void save_last_state(const AppState& state);
// At launch, the last session's place: opened when the launch names nothing else (the status bar says so), else kept
// in state.continue_from for the sidebar's "Continue" entry. A file that cannot be read is reported and changes
// nothing.
void take_up_last_state(AppState& state, bool open_it);
// Goes to state.continue_from (lesson, step and parameters) and forgets it.
void continue_where_left_off(AppState& state);
// "<lesson title>, step N" of a saved place.
std::string place_label(const LessonState& place);

// The student's progress (lessons/common/progress.h), one file in config_dir().
std::string progress_path();
// Reads progress_path() into state.progress. A file that cannot be read leaves the progress empty and is reported in
// the status bar; the next save sets it aside (progress.json.damaged) and writes a new one.
void load_progress(AppState& state);
// Writes state.progress when it changed since the last load or save: what it counted since then is added to the file
// as it is now (another window may have saved meanwhile), and state.progress becomes the sum. A file that cannot be
// read is set aside (progress.json.damaged). A failed write is said once in the status bar.
void save_progress_if_changed(AppState& state);
// Forgets every lesson's progress and writes the emptied file at once.
void reset_progress(AppState& state);

}  // namespace dlsys::gui
