// What a lesson tells whoever runs it while it runs: progress that only rises, stays below 1 until the run is done,
// and reaches 1 once at the end. Every lesson here states its parts in a RunPlan.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "lessons/common/run_lesson.h"
#include "lessons/registry.h"

namespace dlsys {

namespace {

std::vector<std::pair<double, std::string>> progress_of_quick_run(const std::string& id) {
  const Lesson& lesson = find_lesson(id);
  std::vector<std::pair<double, std::string>> reported;
  RunControl control([&](double fraction, const std::string& what) { reported.push_back({fraction, what}); });
  run_lesson(lesson, parse_lesson_params(lesson, {}, BackendKind::Cpu, true), BackendKind::Cpu, control);
  return reported;
}

}  // namespace

TEST_CASE("lesson progress rises through the run's parts and reaches 1 only when it is done") {
  for (const char* id : {"bubble", "schedules", "zero", "ddp", "tensor", "serving", "precision", "quant", "fusion",
                         "kvcache", "matmul", "allreduce", "flash"}) {
    CAPTURE(id);
    const auto reported = progress_of_quick_run(id);
    REQUIRE(reported.size() >= 2);
    for (std::size_t i = 0; i + 1 < reported.size(); ++i) {
      CAPTURE(reported[i].second);
      CHECK(reported[i].first >= 0);
      CHECK(reported[i].first < 1);
      CHECK(reported[i].first <= reported[i + 1].first);
    }
    CHECK(reported.back() == std::pair<double, std::string>{1.0, "done"});
  }
}

}  // namespace dlsys
