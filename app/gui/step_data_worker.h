#pragma once
// Computes a lesson's step data on a background thread, once per change of its parameters. The view draws the
// latest finished data (it carries what it was computed from), so dragging a slider never blocks a frame.
#include <future>
#include <memory>
#include <string>

#include "engine/params.h"
#include "lessons/common/lesson.h"

namespace dlsys::gui {

class StepDataWorker {
 public:
  StepDataWorker() = default;
  StepDataWorker(StepDataWorker&&) = default;
  StepDataWorker& operator=(StepDataWorker&&) = default;
  ~StepDataWorker();

  // Call once a frame: starts a computation when the parameters differ from the last ones asked for and none is
  // going on, and collects one that finished. Cheap when nothing changed.
  void request(const Lesson& lesson, const ParamValues& params);
  // The same, synchronously: for screenshots and exports that must draw the final data at once.
  void compute_now(const Lesson& lesson, const ParamValues& params);

  const StepData* latest() const { return latest_.get(); }
  // Newer parameters than the latest data's are being (or about to be) computed.
  bool pending() const { return latest_key_ != wanted_key_; }
  // Why the latest parameters could not be drawn; empty when they could.
  const std::string& error() const { return error_; }

 private:
  struct Outcome {
    std::shared_ptr<const StepData> data;
    std::string error;
  };
  void collect(Outcome outcome, const std::string& key);

  std::future<Outcome> computing_;
  std::string computing_key_;
  std::string wanted_key_;
  std::string latest_key_ = "\x01";  // differs from any real key until the first result arrives
  std::shared_ptr<const StepData> latest_;
  std::string error_;
};

}  // namespace dlsys::gui
