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
// Returns false, changing nothing, when no state was saved yet; throws BadInput for a file that cannot be read.
bool open_last_state(AppState& state);

}  // namespace dlsys::gui
