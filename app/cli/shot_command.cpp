#include "app/cli/shot_command.h"

#include "engine/errors.h"

namespace dlsys {

namespace {

// Set once by main() before any command runs, so no lock is needed.
ShotRenderer registered_renderer = nullptr;

}  // namespace

void set_shot_renderer(ShotRenderer renderer) { registered_renderer = renderer; }

std::string every_step_path(const std::string& path, int step) {
  const std::size_t slash = path.find_last_of('/');
  std::size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash) || dot == slash + 1) dot = path.size();
  return path.substr(0, dot) + "-step" + std::to_string(step) + path.substr(dot);
}

int shot_command(const ShotOptions& options, std::ostream& out, std::ostream& err) {
  if (registered_renderer == nullptr)
    throw BadInput("this build has no GUI (configured with DLSYS_WITH_GUI=OFF), so `shot` cannot render");
  return registered_renderer(options, out, err);
}

}  // namespace dlsys
