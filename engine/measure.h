#pragma once
// Timing: a steady_clock stopwatch and a measurement helper that warms up, repeats and reports median/min/max.
// The first call of anything is never timed (caches, page faults, lazy initialisation).
#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace dlsys {

class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  void restart() { start_ = std::chrono::steady_clock::now(); }
  double elapsed_us() const {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

struct MeasureOptions {
  int warmup = 1;
  int repeats = 5;
  // Stop repeating once the timed calls took this long in total (at least one is always timed); 0 = no limit.
  double max_total_us = 0;
  // Keep timing past `repeats` until the timed calls took at least this long in total (at most kMaxTimedCalls calls):
  // a one-repeat run then still times a millisecond call a few times, so its fastest call is not one unlucky sample.
  double min_total_us = 0;
  static constexpr int kMaxTimedCalls = 100;
};

struct TimingStats {
  double median_us = 0;
  double min_us = 0;
  double max_us = 0;
  int repeats = 0;
  std::string timer = "steady_clock";
};

// A timed quantity as a lesson reports it: the median call, the fastest and the slowest, in microseconds. The one
// type for it; engine/lesson_values.h writes it under the keys each lesson's JSON has always used.
struct TimeSpread {
  double us = 0, min_us = 0, max_us = 0;
};

// The spread of `stats`, every time divided by `calls` (samples that each timed a batch of `calls` calls).
TimeSpread spread_of(const TimingStats& stats, double calls = 1);

// Summary of samples already taken (for timers other than the stopwatch, e.g. CUDA events).
TimingStats summarize_us(std::vector<double> samples_us, std::string timer);

// What times one call: the steady_clock stopwatch unless `call_us` is set (e.g. to CUDA events, where a call only
// enqueues kernels and the timer waits for them); `name` goes into the TimingStats.
struct CallTimer {
  std::string name = "steady_clock";
  std::function<double(const std::function<void()>&)> call_us;  // microseconds one call took
};

// One call of `work`, timed by `timer`: its microseconds (for a loop whose calls must run in an order of its own).
double time_call_us(const CallTimer& timer, const std::function<void()>& work);

// Times `work`: `warmup` untimed calls, then up to `repeats` timed ones. `between` (optional) runs before every call,
// untimed, e.g. to check for cancellation.
TimingStats measure(const std::function<void()>& work, const MeasureOptions& options,
                    const std::function<void()>& between = {}, const CallTimer& timer = {});

// Two ways of computing the same thing, timed in alternation: `warmup` untimed calls of each, then a timed call of
// `first`, one of `second`, and so on for up to `repeats` pairs (the time limits count both): a burst of other work
// slows both alike instead of only whichever ran during it.
std::pair<TimingStats, TimingStats> measure_pair(const std::function<void()>& first,
                                                 const std::function<void()>& second, const MeasureOptions& options,
                                                 const std::function<void()>& between = {},
                                                 const CallTimer& timer = {});

// Times a call too short for one clock read in batches of back-to-back calls, as nccl-tests' iterations do: one
// untimed batch of a single call picks how many calls make a sample of about 2 ms (1 to 1000), then measure() times
// one batch per sample. `batch_us(calls)` runs `calls` calls and returns their microseconds, however it times them (a
// stopwatch, CUDA events, the slowest process's clock). Returns the time per call; `calls_per_sample` says how many
// calls each sample was. Where batch_us returns the same on every process, every process takes the same samples.
TimingStats measure_batched(const std::function<double(int calls)>& batch_us, const MeasureOptions& options,
                            const std::function<void()>& between, int& calls_per_sample, std::string timer);

// One measured point whose output was checked before it was timed (llm.c's check-then-bench): a wrong result is
// reported beside its time, never hidden behind it.
struct CheckedTiming {
  TimingStats time;
  double max_error = 0;  // what `check` returned after the first call
  double tolerance = 0;
  bool wrong() const { return !(max_error <= tolerance); }  // NaN is wrong
};

// Calls `work` once, asks `check` for the output's error against its reference, then times `work` as measure() does.
CheckedTiming measure_checked(const std::function<void()>& work, const std::function<double()>& check, double tolerance,
                              const MeasureOptions& options, const std::function<void()>& between = {},
                              const CallTimer& timer = {});

}  // namespace dlsys
