#pragma once
// Threads started once and reused by every CPU parallel loop. Starting threads on every call cost tens of
// microseconds per thread, which at small sizes was the whole time of a kernel and bent the fitted slopes.
// One loop runs on the pool at a time; a loop started while the pool is busy (a second thread of the app, or a loop
// inside a loop) runs on threads of its own instead, as before, so no caller ever waits for another.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace dlsys {

class WorkerPool {
 public:
  // The process's pool, started on first use.
  static WorkerPool& shared();
  ~WorkerPool();

  // Runs task(i) for every i in [0, count): i = 0 on the calling thread, the others on pool threads. Returns once
  // all have returned; the first exception thrown by any task is rethrown here. A pool thread that cannot be started
  // is a RunFailure.
  void run(int count, const std::function<void(int)>& task);

 private:
  WorkerPool() = default;
  void grow_to(int threads);  // with mutex_ held
  void work(int index);
  static void run_on_new_threads(int count, const std::function<void(int)>& task);
  void wait_briefly_for_tasks() const;  // polls unfinished_ for up to kPollBeforeSleeping
  static constexpr std::chrono::microseconds kPollBeforeSleeping{200};

  std::mutex mutex_;
  std::condition_variable wake_;  // a new loop, or the end
  std::condition_variable done_;  // the last task of a loop finished
  std::vector<std::thread> threads_;
  const std::function<void(int)>* task_ = nullptr;
  int task_count_ = 0;
  std::atomic<int> unfinished_ = 0;  // written under mutex_; read without it while the caller spins
  std::uint64_t generation_ = 0;
  bool busy_ = false;
  bool stopping_ = false;
  std::exception_ptr first_error_;
};

}  // namespace dlsys
