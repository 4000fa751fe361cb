#pragma once
// The GUI's implementation of `dlsys-lab shot`, registered with the CLI by main() (set_shot_renderer).
#include <iosfwd>

#include "app/cli/compare_command.h"
#include "app/cli/shot_command.h"

namespace dlsys {

int render_shot(const ShotOptions& options, std::ostream& out, std::ostream& err);
// The GUI's implementation of `dlsys-lab compare -o` (set_compare_renderer): the step for both runs, the table under.
RenderedFigure render_compare(const CompareOptions& options, const RunResult& a, const RunResult& b);

}  // namespace dlsys
