#include "lessons/common/run_plan.h"

#include <algorithm>

namespace dlsys {

void RunPlan::start(const std::string& what, double weight) {
  control_.check_cancelled();
  // A run may start more parts than it planned (a probe repeated); the progress then waits just short of the end.
  control_.progress(std::min(done_ / std::max(total_, 1e-9), 0.99), what);
  done_ += weight;
}

}  // namespace dlsys
