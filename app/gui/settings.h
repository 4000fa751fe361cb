#pragma once
// Where the GUI keeps its files: settings under the XDG config folder, exports and saved states under the user's
// folder of choice ($DLSYS_LAB_OUT, else ~/dlsys-lab). Saved lesson state is a small JSON file.
#include <string>

#include "app/gui/app_state.h"

namespace dlsys::gui {

// $XDG_CONFIG_HOME/dlsys-lab (or ~/.config/dlsys-lab), created if missing.
std::string config_dir();
// $DLSYS_LAB_OUT or ~/dlsys-lab, created if missing.
std::string output_dir();
// "<output_dir>/<stem>-YYYYmmdd-HHMMSS.<ext>", with -2, -3, ... before the extension when that file exists.
std::string timestamped_output_path(const std::string& stem, const std::string& ext);

// {"lesson", "step", "params": {...}} -> file. Throws RunFailure when the file cannot be written.
void save_state_file(const std::string& path, const std::string& lesson_id, int step, const ParamValues& params);
// Reads a state file into `state` (selects the lesson, sets step and parameters). Throws BadInput naming what was
// wrong (not JSON, unknown lesson, bad parameter, step out of range).
void open_state_file(const std::string& path, AppState& state);

}  // namespace dlsys::gui
