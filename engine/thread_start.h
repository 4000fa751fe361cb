#pragma once
// Starting a group of threads so that failing to start one (too many threads, no address space left for a stack)
// is a run failure and not std::terminate: the threads already running are told to stop, joined, and the caller
// gets RunFailure naming what it was starting and why.
#include <fmt/format.h>

#include <cstdlib>
#include <exception>
#include <mutex>
#include <new>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "engine/errors.h"

namespace dlsys {

// For tests of what a thread limit does (ulimit -u does not bind root): when the environment variable
// DLSYS_FAIL_THREAD_START holds part of a group's `what`, the last thread of that group fails to start as it would on
// a machine out of threads.
inline bool thread_start_failure_injected(std::string_view what) {
  const char* wanted = std::getenv("DLSYS_FAIL_THREAD_START");
  return wanted != nullptr && *wanted != '\0' && what.find(wanted) != std::string_view::npos;
}

// Appends one thread per index in [first, last) running body(index). If a thread cannot be started, calls
// `stop_started()` (which must make the started threads return without waiting for the missing ones), joins every
// thread in `threads`, and throws RunFailure mentioning `what` ("rank threads of the communicator").
template <typename Body, typename Stop>
void start_threads(std::vector<std::thread>& threads, int first, int last, Body body, Stop stop_started,
                   std::string_view what) {
  std::string reason;
  int failed_at = first;
  try {
    threads.reserve(threads.size() + static_cast<std::size_t>(last - first));
    const bool inject = thread_start_failure_injected(what);
    for (failed_at = first; failed_at < last; ++failed_at) {
      if (inject && failed_at == last - 1)
        throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again),
                                "DLSYS_FAIL_THREAD_START");
      threads.emplace_back(body, failed_at);
    }
    return;
  } catch (const std::system_error& e) {
    reason = e.what();
  } catch (const std::bad_alloc&) {
    reason = "out of memory";
  }
  stop_started();
  for (auto& thread : threads)
    if (thread.joinable()) thread.join();
  threads.clear();
  throw RunFailure(
      fmt::format("could not start thread {} of {} for {}: {} (the machine is out of threads or of "
                  "address space for their stacks; try fewer threads or ranks)",
                  failed_at - first + 1, last - first, what, reason));
}

// Remembers the first exception thrown on any of several threads, to rethrow on the caller's thread once all have
// been joined (an exception escaping a thread's function would otherwise end the process).
class FirstError {
 public:
  void capture() {
    std::lock_guard lock(mutex_);
    if (!error_) error_ = std::current_exception();
  }
  void rethrow_if_any() {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr error_;
};

}  // namespace dlsys
