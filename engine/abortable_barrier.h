#pragma once
// A barrier for a fixed group of threads that can be called off. std::barrier cannot: when one thread of the group
// never arrives (it failed to start, or threw), the others wait in it forever. abort() wakes every waiter, and turns
// every later wait into an immediate return, so such threads can give up and be joined.
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace dlsys {

class AbortableBarrier {
 public:
  explicit AbortableBarrier(int count) : count_(count) {}
  AbortableBarrier(const AbortableBarrier&) = delete;
  AbortableBarrier& operator=(const AbortableBarrier&) = delete;

  // Waits until all `count` threads have arrived; false when the barrier was aborted (before or during the wait).
  [[nodiscard]] bool arrive_and_wait() {
    std::unique_lock lock(mutex_);
    if (aborted_) return false;
    const std::uint64_t phase = phase_;
    if (++arrived_ == count_) {
      arrived_ = 0;
      ++phase_;
      released_.notify_all();
      return true;
    }
    released_.wait(lock, [&] { return aborted_ || phase_ != phase; });
    return phase_ != phase;  // a phase completed before the abort still counts as passed
  }

  void abort() {
    {
      std::lock_guard lock(mutex_);
      aborted_ = true;
    }
    released_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable released_;
  const int count_;
  int arrived_ = 0;
  std::uint64_t phase_ = 0;
  bool aborted_ = false;
};

}  // namespace dlsys
