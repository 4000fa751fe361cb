#pragma once
// The GUI's implementation of `dlsys-lab shot`, registered with the CLI by main() (set_shot_renderer).
#include <iosfwd>

#include "app/cli/shot_command.h"

namespace dlsys {

int render_shot(const ShotOptions& options, std::ostream& out, std::ostream& err);

}  // namespace dlsys
