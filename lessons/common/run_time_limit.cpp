#include "lessons/common/run_time_limit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/errors.h"
#include "engine/units.h"

namespace dlsys {

namespace {
std::string human_duration(double seconds) {
  if (seconds >= 86400 * 2) return fmt::format("{:.3g} days", seconds / 86400);
  if (seconds >= 3600) return fmt::format("{:.3g} hours", seconds / 3600);
  return fmt::format("{:.3g} minutes", seconds / 60);
}
}  // namespace

ParamSpec max_minutes_param() {
  return {"max_minutes",
          "longest run allowed",
          ParamType::Real,
          "10",
          0.1,
          1e6,
          {},
          "min",
          "runs estimated to take longer are refused before they start"};
}

double estimated_seconds(double flop, double gflops_per_thread, int threads) {
  return flop / (gflops_per_thread * 1e9 * std::max(1, threads));
}

void refuse_if_longer_than_limit(const ParamValues& params, double estimated_s, const std::string& work,
                                 const std::string& smaller) {
  refuse_if_longer_than(params.real("max_minutes"), estimated_s, work, smaller);
}

void refuse_if_longer_than(double limit_min, double estimated_s, const std::string& work, const std::string& smaller) {
  if (estimated_s <= limit_min * 60) return;
  const double needed_min = std::ceil(estimated_s / 60);
  throw BadInput(
      fmt::format("this run would take about {} on this CPU ({}), more than max_minutes = {}; allowed: "
                  "runs estimated at up to max_minutes; raise it (--set max_minutes={:.0f}) or lower {}",
                  human_duration(estimated_s), work, format_number(limit_min), needed_min, smaller));
}

}  // namespace dlsys
