#include "app/gui/run_worker.h"

#include <system_error>

#include "app/gui/window_cpu.h"
#include "engine/measure.h"
#include "lessons/common/run_lesson.h"

namespace dlsys::gui {

RunWorker::~RunWorker() {
  cancel();
  join();
}

void RunWorker::join() {
  if (thread_.joinable()) thread_.join();
}

void RunWorker::start(const Lesson& lesson, const ParamValues& params, BackendKind backend) {
  if (busy_) return;
  join();
  busy_ = true;
  progress_ = 0;
  {
    std::lock_guard lock(mutex_);
    lesson_id_ = lesson.id();
    progress_text_ = "starting";
    finished_.reset();
  }
  control_ = std::make_unique<RunControl>([this](double fraction, const std::string& what) {
    progress_ = fraction;
    std::lock_guard lock(mutex_);
    progress_text_ = what;
  });
  try {
    thread_ = std::thread([this, &lesson, params, backend] {
      RunOutcome outcome;
      outcome.lesson_id = lesson.id();
      Stopwatch watch;
      const double window_cpu_start_s = window_cpu_seconds();
      try {
        RunResult result = run_lesson(lesson, params, backend, *control_);
        RunConditions& conditions = result.backend.conditions;
        if (conditions.wall_s > 0)
          conditions.window_cpu_cores = (window_cpu_seconds() - window_cpu_start_s) / conditions.wall_s;
        outcome.result = std::make_shared<const RunResult>(std::move(result));
      } catch (const Cancelled&) {
        outcome.error = "cancelled";
      } catch (const std::exception& e) {
        outcome.error = e.what();  // BadInput, RunFailure, or anything else: the app stays usable
      } catch (...) {
        outcome.error = "internal error: an exception of unknown type";
      }
      outcome.wall_s = watch.elapsed_us() / 1e6;
      std::lock_guard lock(mutex_);
      finished_ = std::move(outcome);
      busy_ = false;
    });
  } catch (const std::system_error& e) {
    // No thread, no run: the window stays usable and says why.
    RunOutcome outcome;
    outcome.lesson_id = lesson.id();
    outcome.error = std::string("could not start the run's thread: ") + e.what();
    std::lock_guard lock(mutex_);
    finished_ = std::move(outcome);
    busy_ = false;
  }
}

void RunWorker::cancel() {
  if (busy_ && control_) control_->request_cancel();
}

bool RunWorker::idle() const {
  std::lock_guard lock(mutex_);
  return !busy_ && !finished_.has_value();
}

std::string RunWorker::progress_text() const {
  std::lock_guard lock(mutex_);
  return progress_text_;
}

std::string RunWorker::running_lesson() const {
  std::lock_guard lock(mutex_);
  return lesson_id_;
}

std::optional<RunOutcome> RunWorker::take_finished() {
  std::lock_guard lock(mutex_);
  std::optional<RunOutcome> out = std::move(finished_);
  finished_.reset();
  return out;
}

}  // namespace dlsys::gui
