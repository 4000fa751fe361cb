#pragma once
// Runs one lesson at a time on a background thread so the UI keeps drawing; the GUI polls it once per frame and
// receives an immutable snapshot of the result.
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "engine/backend.h"
#include "engine/params.h"
#include "engine/run_control.h"
#include "engine/run_result.h"
#include "lessons/common/lesson.h"

namespace dlsys::gui {

struct RunOutcome {
  std::string lesson_id;
  std::shared_ptr<const RunResult> result;  // set on success
  std::string error;                        // set on failure: the BadInput / RunFailure message, or "cancelled"
  double wall_s = 0;
};

class RunWorker {
 public:
  ~RunWorker();
  bool busy() const { return busy_; }
  // Neither running nor holding a result the GUI has not collected yet.
  bool idle() const;
  // Starts `lesson` with `params`; ignored while busy.
  void start(const Lesson& lesson, const ParamValues& params, BackendKind backend);
  void cancel();
  double progress() const { return progress_; }
  std::string progress_text() const;
  std::string running_lesson() const;
  // The finished run, once; nullopt while running or idle.
  std::optional<RunOutcome> take_finished();

 private:
  void join();
  std::thread thread_;
  std::unique_ptr<RunControl> control_;
  std::atomic<bool> busy_{false};
  std::atomic<double> progress_{0};
  mutable std::mutex mutex_;
  std::string progress_text_;
  std::string lesson_id_;
  std::optional<RunOutcome> finished_;
};

}  // namespace dlsys::gui
