#pragma once
#include "app/cli/cli.h"

namespace dlsys {

// Opens the window and runs the GUI until it is closed. Returns the process exit code.
int run_gui(const GuiRequest& request);

}  // namespace dlsys
