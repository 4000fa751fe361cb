// Built only when the GUI is switched off (DLSYS_WITH_GUI=OFF): `shot` cannot render and says why.
#include "app/cli/shot_command.h"
#include "engine/errors.h"

namespace dlsys {

int shot_command(const ShotOptions&, std::ostream&, std::ostream&) {
  throw BadInput("this build has no GUI (configured with DLSYS_WITH_GUI=OFF), so `shot` cannot render");
}

}  // namespace dlsys
