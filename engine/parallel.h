#pragma once
// Splits [0, count) into `threads` contiguous ranges and runs them at once on the process's worker pool (the caller
// takes the first range). An exception in any range reaches the caller once every range has finished.
#include <algorithm>
#include <cstdint>

#include "engine/worker_pool.h"

namespace dlsys {

template <typename RangeFn>
void parallel_for(std::int64_t count, int threads, RangeFn&& fn) {
  threads = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(threads, count)));
  if (threads == 1) {
    fn(std::int64_t{0}, count);
    return;
  }
  auto range_begin = [&](int t) { return count * t / threads; };
  WorkerPool::shared().run(threads, [&](int t) { fn(range_begin(t), range_begin(t + 1)); });
}

}  // namespace dlsys
