#pragma once
// The headless command line: list, info, run, shot, export. Same binary and same lessons as the GUI.
#include <iosfwd>
#include <string>
#include <vector>

namespace dlsys {

// What the GUI needs from the command line when no subcommand was given.
struct GuiRequest {
  std::string open_state_file;  // --open FILE
};

// Parses `args` (without the program name) and runs the subcommand. Returns the process exit code.
// When no subcommand is given, sets `wants_gui` and fills `gui` instead.
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, bool& wants_gui,
            GuiRequest& gui);

}  // namespace dlsys
