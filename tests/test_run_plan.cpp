// A run's plan of parts: the progress it reports from their weights, and where it lets a run stop.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "engine/errors.h"
#include "lessons/common/run_plan.h"

namespace dlsys {

TEST_CASE("a run plan reports the weight done before each part, skipped parts counted, and 1 at the finish") {
  std::vector<std::pair<double, std::string>> reported;
  RunControl control([&](double fraction, const std::string& what) { reported.push_back({fraction, what}); });
  RunPlan plan(control, 4);
  plan.start("first", 1);
  plan.skip(2);
  plan.start("last", 1);
  plan.finish();
  REQUIRE(reported.size() == 3);
  CHECK(reported[0] == std::pair<double, std::string>{0.0, "first"});
  CHECK(reported[1] == std::pair<double, std::string>{0.75, "last"});
  CHECK(reported[2] == std::pair<double, std::string>{1.0, "done"});
}

TEST_CASE("a run plan stops at the next part once the run was asked to stop") {
  RunControl control;
  RunPlan plan(control, 2);
  plan.start("first");
  control.request_cancel();
  CHECK_THROWS_AS(plan.start("second"), Cancelled);
}

}  // namespace dlsys
