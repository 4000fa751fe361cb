#include "app/cli/run_guarded.h"

#include <exception>
#include <ostream>

#include "engine/errors.h"

namespace dlsys {

int run_guarded(const std::function<int()>& body, std::ostream& err, std::string_view what) {
  try {
    return body();
  } catch (const BadInput& e) {
    err << "dlsys-lab: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const RunFailure& e) {
    err << "dlsys-lab: run failed: " << e.what() << "\n";
    return kExitRunFailure;
  } catch (const Cancelled&) {
    err << "dlsys-lab: cancelled\n";
    return kExitRunFailure;
  } catch (const std::exception& e) {
    // Not a failure the code foresaw (bad_alloc, system_error, a JSON library error, ...): still a message and an
    // exit code rather than std::terminate, so scripts and users see what was going on when it happened.
    err << "dlsys-lab: internal error while " << what << ": " << e.what() << "\n";
    return kExitRunFailure;
  } catch (...) {
    err << "dlsys-lab: internal error while " << what << ": an exception of unknown type (not a std::exception)\n";
    return kExitRunFailure;
  }
}

}  // namespace dlsys
