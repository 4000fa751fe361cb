#pragma once
// Splits [0, count) into `threads` contiguous ranges and runs them on their own threads (the caller takes the first).
// Threads are created per call: kernels here run for milliseconds, so a pool would not change the measurements.
// A thread that cannot be started is a RunFailure after the others finished; an exception in any range reaches the
// caller once every thread has been joined.
#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

#include "engine/thread_start.h"

namespace dlsys {

template <typename RangeFn>
void parallel_for(std::int64_t count, int threads, RangeFn&& fn) {
  threads = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(threads, count)));
  if (threads == 1) {
    fn(std::int64_t{0}, count);
    return;
  }
  auto range_begin = [&](int t) { return count * t / threads; };
  FirstError error;
  auto run_range = [&](int t) {
    try {
      fn(range_begin(t), range_begin(t + 1));
    } catch (...) {
      error.capture();
    }
  };
  std::vector<std::thread> workers;
  // The ranges are independent: threads already started simply finish theirs before being joined.
  start_threads(
      workers, 1, threads, run_range, [] {}, "a parallel loop");
  run_range(0);
  for (auto& worker : workers) worker.join();
  error.rethrow_if_any();
}

}  // namespace dlsys
