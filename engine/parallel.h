#pragma once
// Splits [0, count) into `threads` contiguous ranges and runs them on their own threads (the caller takes the first).
// Threads are created per call: kernels here run for milliseconds, so a pool would not change the measurements.
#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace dlsys {

template <typename RangeFn>
void parallel_for(std::int64_t count, int threads, RangeFn&& fn) {
  threads = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(threads, count)));
  if (threads == 1) {
    fn(std::int64_t{0}, count);
    return;
  }
  std::vector<std::thread> workers;
  workers.reserve(threads - 1);
  auto range_begin = [&](int t) { return count * t / threads; };
  for (int t = 1; t < threads; ++t) workers.emplace_back([&, t] { fn(range_begin(t), range_begin(t + 1)); });
  fn(range_begin(0), range_begin(1));
  for (auto& worker : workers) worker.join();
}

}  // namespace dlsys
