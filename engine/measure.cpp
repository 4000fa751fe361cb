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

double time_call_us(const CallTimer& timer, const std::function<void()>& work) {
  if (timer.call_us) return timer.call_us(work);
  Stopwatch watch;
  work();
  return watch.elapsed_us();
}

namespace {

// The one timing loop: each of `works` once per round, in order; warm-up rounds untimed, then timed rounds until the
// options say stop (their time limits count every work of a round).
std::vector<TimingStats> measure_rounds(const std::vector<const std::function<void()>*>& works,
                                        const MeasureOptions& options, const std::function<void()>& between,
                                        const CallTimer& timer) {
  for (int i = 0; i < options.warmup; ++i)
    for (const auto* work : works) {
      if (between) between();
      (*work)();
    }
  std::vector<std::vector<double>> samples(works.size());
  double total_us = 0;
  const auto more = [&](int rounds) {
    if (rounds < std::max(1, options.repeats)) return true;
    return total_us < options.min_total_us && rounds < MeasureOptions::kMaxTimedCalls;
  };
  for (int round = 0; more(round); ++round) {
    for (std::size_t w = 0; w < works.size(); ++w) {
      if (between) between();
      samples[w].push_back(time_call_us(timer, *works[w]));
      total_us += samples[w].back();
    }
    // A budget keeps slow cases (the naive loop at n = 1024) to one or two timed calls instead of `repeats`.
    if (options.max_total_us > 0 && total_us > options.max_total_us) break;
  }
  std::vector<TimingStats> out;
  for (std::vector<double>& s : samples) out.push_back(summarize_us(std::move(s), timer.name));
  return out;
}

}  // namespace

TimingStats measure(const std::function<void()>& work, const MeasureOptions& options,
                    const std::function<void()>& between, const CallTimer& timer) {
  return measure_rounds({&work}, options, between, timer).front();
}

std::pair<TimingStats, TimingStats> measure_pair(const std::function<void()>& first,
                                                 const std::function<void()>& second, const MeasureOptions& options,
                                                 const std::function<void()>& between, const CallTimer& timer) {
  const std::vector<TimingStats> both = measure_rounds({&first, &second}, options, between, timer);
  return {both[0], both[1]};
}

TimingStats measure_batched(const std::function<double(int calls)>& batch_us, const MeasureOptions& options,
                            const std::function<void()>& between, int& calls_per_sample, std::string timer) {
  if (between) between();
  const double first_us = std::max(batch_us(1), 0.1);
  calls_per_sample = static_cast<int>(std::clamp(2000.0 / first_us, 1.0, 1000.0));
  double batch_took_us = 0;
  const CallTimer batch_timer{.name = std::move(timer), .call_us = [&](const std::function<void()>& run_batch) {
                                run_batch();
                                return batch_took_us;
                              }};
  TimingStats stats = measure([&] { batch_took_us = batch_us(calls_per_sample); }, options, between, batch_timer);
  stats.median_us /= calls_per_sample;
  stats.min_us /= calls_per_sample;
  stats.max_us /= calls_per_sample;
  return stats;
}

CheckedTiming measure_checked(const std::function<void()>& work, const std::function<double()>& check, double tolerance,
                              const MeasureOptions& options, const std::function<void()>& between,
                              const CallTimer& timer) {
  if (between) between();
  work();
  CheckedTiming point;
  point.max_error = check();
  point.tolerance = tolerance;
  // The checked call warmed the caches: it counts as one of the warm-up calls.
  MeasureOptions rest = options;
  rest.warmup = std::max(0, options.warmup - 1);
  point.time = measure(work, rest, between, timer);
  return point;
}

}  // namespace dlsys
