#pragma once
// What a running lesson may ask of whoever started it: whether to stop, and where to report progress.
#include <atomic>
#include <functional>
#include <string>

#include "engine/errors.h"

namespace dlsys {

class RunControl {
 public:
  using ProgressFn = std::function<void(double fraction, const std::string& what)>;
  RunControl() = default;
  explicit RunControl(ProgressFn on_progress) : on_progress_(std::move(on_progress)) {}

  void request_cancel() { cancel_requested_ = true; }
  bool cancel_requested() const { return cancel_requested_; }
  // Throws Cancelled when the user asked to stop; lessons call it between measurements.
  void check_cancelled() const {
    if (cancel_requested_) throw Cancelled();
  }
  void progress(double fraction, const std::string& what) const {
    if (on_progress_) on_progress_(fraction, what);
  }

 private:
  std::atomic<bool> cancel_requested_{false};
  ProgressFn on_progress_;
};

}  // namespace dlsys
