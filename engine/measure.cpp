#include "engine/measure.h"

#include <algorithm>

namespace dlsys {

TimingStats summarize_us(std::vector<double> samples_us, std::string timer) {
  TimingStats stats;
  stats.timer = std::move(timer);
  stats.repeats = static_cast<int>(samples_us.size());
  if (samples_us.empty()) return stats;
  std::sort(samples_us.begin(), samples_us.end());
  const std::size_t n = samples_us.size();
  stats.median_us = n % 2 ? samples_us[n / 2] : 0.5 * (samples_us[n / 2 - 1] + samples_us[n / 2]);
  stats.min_us = samples_us.front();
  stats.max_us = samples_us.back();
  return stats;
}

TimeSpread spread_of(const TimingStats& stats, double calls) {
  return {stats.median_us / calls, stats.min_us / calls, stats.max_us / calls};
}

TimingStats measure(const std::function<void()>& work, const MeasureOptions& options,
                    const std::function<void()>& between) {
  for (int i = 0; i < options.warmup; ++i) {
    if (between) between();
    work();
  }
  std::vector<double> samples;
  double total_us = 0;
  const auto more = [&](int timed) {
    if (timed < std::max(1, options.repeats)) return true;
    return total_us < options.min_total_us && timed < MeasureOptions::kMaxTimedCalls;
  };
  for (int i = 0; more(i); ++i) {
    if (between) between();
    Stopwatch watch;
    work();
    samples.push_back(watch.elapsed_us());
    total_us += samples.back();
    // A budget keeps slow cases (the naive loop at n = 1024) to one or two timed calls instead of `repeats`.
    if (options.max_total_us > 0 && total_us > options.max_total_us) break;
  }
  return summarize_us(std::move(samples), "steady_clock");
}

CheckedTiming measure_checked(const std::function<void()>& work, const std::function<double()>& check, double tolerance,
                              const MeasureOptions& options, const std::function<void()>& between) {
  if (between) between();
  work();
  CheckedTiming point;
  point.max_error = check();
  point.tolerance = tolerance;
  // The checked call warmed the caches: it counts as one of the warm-up calls.
  MeasureOptions rest = options;
  rest.warmup = std::max(0, options.warmup - 1);
  point.time = measure(work, rest, between);
  return point;
}

}  // namespace dlsys
