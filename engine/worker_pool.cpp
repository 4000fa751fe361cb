#include "engine/worker_pool.h"

#include <chrono>

#include "engine/thread_start.h"

namespace dlsys {

namespace {
thread_local bool on_pool_thread = false;  // a loop inside a pool task must not wait for the pool
}

WorkerPool& WorkerPool::shared() {
  static WorkerPool pool;
  return pool;
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& thread : threads_) thread.join();
}

void WorkerPool::grow_to(int threads) {
  // Pool thread k (1-based) runs task k of each loop; task 0 is always the caller's. Only the thread that holds the
  // pool (busy_) grows it, without the mutex, so threads that fail to start can be stopped and joined.
  const int have = static_cast<int>(threads_.size()) + 1;
  if (threads <= have) return;
  start_threads(
      threads_, have, threads, [this](int index) { work(index); },
      [this] {
        {
          std::lock_guard lock(mutex_);
          stopping_ = true;  // the pool is done for: later loops run on threads of their own
        }
        wake_.notify_all();
      },
      "the CPU worker pool");
}

void WorkerPool::work(int index) {
  on_pool_thread = true;
  std::uint64_t seen = 0;
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
    if (stopping_) return;
    seen = generation_;
    if (index >= task_count_) continue;  // this loop needs fewer threads
    const std::function<void(int)>& task = *task_;
    lock.unlock();
    std::exception_ptr error;
    try {
      task(index);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    if (error && !first_error_) first_error_ = error;
    if (--unfinished_ == 0) done_.notify_one();
  }
}

void WorkerPool::run_on_new_threads(int count, const std::function<void(int)>& task) {
  FirstError error;
  auto guarded = [&](int index) {
    try {
      task(index);
    } catch (...) {
      error.capture();
    }
  };
  std::vector<std::thread> threads;
  // The tasks are independent: threads already started simply finish theirs before being joined.
  start_threads(
      threads, 1, count, guarded, [] {}, "a parallel loop");
  guarded(0);
  for (auto& thread : threads) thread.join();
  error.rethrow_if_any();
}

void WorkerPool::wait_briefly_for_tasks() const {
  // A caller asleep on the condition variable is woken by the last task's notify, and on a 2-core virtual machine that
  // wake-up took tens of microseconds: a 2-thread GEMV over 1 MB, flushed from the caches before each call, took
  // 119 us against 80 us with this poll. Tasks of one loop end close together, so the caller polls first, yielding
  // its core in case a task waits for it.
  const auto give_up = std::chrono::steady_clock::now() + kPollBeforeSleeping;
  while (unfinished_.load(std::memory_order_acquire) != 0 && std::chrono::steady_clock::now() < give_up)
    std::this_thread::yield();
}

void WorkerPool::run(int count, const std::function<void(int)>& task) {
  if (count <= 1) {
    if (count == 1) task(0);
    return;
  }
  bool free = false;
  {
    std::lock_guard lock(mutex_);
    free = !busy_ && !on_pool_thread && !stopping_;
    if (free) busy_ = true;
  }
  // Never wait for someone else's loop: run this one as the pool would, on threads of its own.
  if (!free) return run_on_new_threads(count, task);
  try {
    grow_to(count);
  } catch (...) {
    std::lock_guard lock(mutex_);
    busy_ = false;
    throw;
  }
  {
    std::lock_guard lock(mutex_);
    task_ = &task;
    task_count_ = count;
    unfinished_ = count - 1;
    first_error_ = nullptr;
    ++generation_;
  }
  wake_.notify_all();
  std::exception_ptr caller_error;
  try {
    task(0);
  } catch (...) {
    caller_error = std::current_exception();
  }
  wait_briefly_for_tasks();
  std::exception_ptr error;
  {
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return unfinished_ == 0; });
    error = caller_error ? caller_error : first_error_;
    task_ = nullptr;
    task_count_ = 0;
    busy_ = false;
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace dlsys
