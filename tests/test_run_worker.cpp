#include <doctest/doctest.h>

#if DLSYS_HAVE_GUI
#include <chrono>
#include <thread>

#include "app/gui/run_worker.h"
#include "lessons/matmul/matmul_values.h"
#include "lessons/registry.h"

using namespace dlsys;

namespace {
// Waits until the worker hands over its outcome; fails the test after `limit`.
gui::RunOutcome wait_for(gui::RunWorker& worker, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto outcome = worker.take_finished()) return *outcome;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  FAIL("the worker did not finish in time");
  return {};
}
}  // namespace

TEST_CASE("the GUI's worker runs a lesson off the UI thread and hands over the result once") {
  const Lesson& lesson = find_lesson("matmul");
  gui::RunWorker worker;
  worker.start(lesson, ParamValues::parse(lesson.params(), {"m=16", "n=16", "k=16", "sizes=8,16", "repeats=1"}),
               BackendKind::Cpu);
  CHECK(worker.busy());
  const gui::RunOutcome outcome = wait_for(worker, std::chrono::seconds(60));
  REQUIRE(outcome.result != nullptr);
  CHECK(outcome.error.empty());
  const auto* measured = outcome.result->measured_as<matmul::MatmulMeasured>();
  REQUIRE(measured != nullptr);
  CHECK(measured->wrong == 0);
  CHECK(measured->variants.size() == 3);
  CHECK(worker.idle());
  CHECK_FALSE(worker.take_finished().has_value());
}

TEST_CASE("Cancel stops a long run between measurements and leaves the worker usable") {
  const Lesson& lesson = find_lesson("matmul");
  gui::RunWorker worker;
  // Hundreds of short timed calls: long in total, yet each call ends quickly so cancellation is seen at once.
  worker.start(lesson, ParamValues::parse(lesson.params(), {"sizes=64..256", "repeats=100", "impl=naive"}),
               BackendKind::Cpu);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  worker.cancel();
  const gui::RunOutcome cancelled = wait_for(worker, std::chrono::seconds(60));
  CHECK(cancelled.result == nullptr);
  CHECK(cancelled.error == "cancelled");

  worker.start(lesson, ParamValues::parse(lesson.params(), {"m=8", "n=8", "k=8", "sizes=8", "repeats=1"}),
               BackendKind::Cpu);
  CHECK(wait_for(worker, std::chrono::seconds(60)).result != nullptr);
}
#endif
