// The machinery every measured lesson stands on: the worker pool its CPU kernels share, the account of what else the
// machine was doing during a run, and the ceilings kept at the best ever measured.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <vector>

#include "engine/best_ceilings.h"
#include "engine/errors.h"
#include "engine/parallel.h"
#include "engine/run_conditions.h"
#include "engine/worker_pool.h"
#include "lessons/common/run_lesson.h"
#include "lessons/registry.h"

namespace dlsys {

TEST_CASE("the worker pool runs every range once, on reused threads, and hands back the first exception") {
  std::vector<std::atomic<int>> hits(1000);
  for (int round = 0; round < 50; ++round)
    parallel_for(1000, 4, [&](std::int64_t begin, std::int64_t end) {
      for (auto i = begin; i < end; ++i) ++hits[i];
    });
  for (const auto& h : hits) CHECK(h == 50);

  CHECK_THROWS_AS(WorkerPool::shared().run(3,
                                           [](int i) {
                                             if (i == 2) throw BadInput("task 2 failed");
                                           }),
                  BadInput);
  // The pool is still usable after an exception.
  std::atomic<int> ran{0};
  WorkerPool::shared().run(3, [&](int) { ++ran; });
  CHECK(ran == 3);
}

TEST_CASE("a loop inside a loop, and loops from two threads at once, never wait for each other") {
  std::atomic<int> inner{0};
  parallel_for(2, 2, [&](std::int64_t, std::int64_t) {
    parallel_for(8, 2, [&](std::int64_t b, std::int64_t e) { inner += static_cast<int>(e - b); });
  });
  CHECK(inner == 16);

  std::atomic<long> total{0};
  auto many_loops = [&] {
    for (int r = 0; r < 200; ++r) parallel_for(64, 3, [&](std::int64_t b, std::int64_t e) { total += e - b; });
  };
  std::thread other(many_loops);
  many_loops();
  other.join();
  CHECK(total == 2 * 200 * 64);
}

TEST_CASE("a run says it was disturbed only when other programs took a quarter of a core or more") {
  RunConditions quiet{.wall_s = 2, .own_cpu_cores = 1.9, .other_busy_cores = 0.1, .hardware_threads = 2};
  CHECK_FALSE(quiet.disturbed());
  CHECK(quiet.sentence().empty());
  RunConditions busy{.wall_s = 2, .own_cpu_cores = 1.0, .other_busy_cores = 1.0, .hardware_threads = 2};
  CHECK(busy.disturbed());
  CHECK(busy.sentence().find("kept 1.0 of this machine's 2 cores busy") != std::string::npos);
  CHECK(busy.sentence().find("Run again") != std::string::npos);

  // A probe around work on this process's own thread counts that work as its own, not as other programs'.
  const RunConditionsProbe probe;
  volatile double sink = 0;
  for (int i = 0; i < 20'000'000; ++i) sink = sink + 1e-9 * i;
  const RunConditions measured = probe.finish();
  CHECK(measured.wall_s > 0);
  CHECK(measured.own_cpu_cores > 0);  // how much of a core it got depends on what else runs: only that it counted
  CHECK(measured.own_cpu_cores <= measured.hardware_threads + 0.1);
}

TEST_CASE("a run drawn over by its own window says so, beside or without other programs") {
  RunConditions calm{.wall_s = 2, .window_cpu_cores = 0.1, .hardware_threads = 2};
  CHECK_FALSE(calm.window_disturbed());
  CHECK(calm.sentence().empty());
  RunConditions drawn{.wall_s = 2, .window_cpu_cores = 0.3, .hardware_threads = 2};
  CHECK(drawn.window_disturbed());
  CHECK_FALSE(drawn.disturbed());  // the lessons' own notes on other programs stay out of it
  CHECK(drawn.sentence() ==
        "This window kept 0.30 of a core busy drawing itself during this run, so its timings are slower and more "
        "scattered than the theory assumes: keep the mouse still while it runs and press Run again.");
  RunConditions both{.wall_s = 2, .other_busy_cores = 1.0, .window_cpu_cores = 0.3, .hardware_threads = 2};
  CHECK(both.sentence() ==
        "Other programs kept 1.0 of this machine's 2 cores busy, and this window kept 0.30 of a core busy drawing "
        "itself during this run, so its timings are slower and more scattered than the theory assumes: close what "
        "you can, keep the mouse still while it runs and press Run again.");
  // The larger cause comes first: a band too narrow for the whole sentence shows its start.
  RunConditions mostly_drawn{.wall_s = 2, .other_busy_cores = 0.3, .window_cpu_cores = 0.5, .hardware_threads = 2};
  CHECK(mostly_drawn.sentence() ==
        "This window kept 0.50 of a core busy drawing itself, and other programs kept 0.3 of this machine's 2 cores "
        "busy during this run, so its timings are slower and more scattered than the theory assumes: keep the mouse "
        "still while it runs, close what you can and press Run again.");
}

TEST_CASE("a ceiling is the best ever measured under its key, kept in the config folder") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "dlsys-ceiling-test";
  std::filesystem::remove_all(dir);
  const char* old = std::getenv("XDG_CONFIG_HOME");
  const std::string saved = old ? old : "";
  setenv("XDG_CONFIG_HOME", dir.c_str(), 1);
  CHECK(best_ceiling("cpu x: sgemm", 185).best == 185);
  const BestCeiling busy = best_ceiling("cpu x: sgemm", 53);
  CHECK(busy.best == 185);
  CHECK(busy.measured == 53);
  CHECK(best_ceiling("cpu x: sgemm", 190).best == 190);
  CHECK(best_ceiling("cpu y: sgemm", 10).best == 10);  // another machine's key starts afresh
  CHECK(std::filesystem::exists(dir / "dlsys-lab" / "ceilings.json"));
  if (old)
    setenv("XDG_CONFIG_HOME", saved.c_str(), 1);
  else
    unsetenv("XDG_CONFIG_HOME");
  std::filesystem::remove_all(dir);
}

namespace {
// A lesson without a CUDA implementation (every registered lesson has one now).
class CpuOnlyLesson final : public Lesson {
 public:
  std::string id() const override { return "cpu_only"; }
  std::string chapter() const override { return "test"; }
  std::vector<ParamSpec> params() const override { return {}; }
  bool runs_on_cuda() const override { return false; }
  std::shared_ptr<const LessonValues> theory(const ParamValues&) const override { return nullptr; }
  RunResult run(RunContext&) const override { return {}; }
  void read_values(const nlohmann::ordered_json&, const nlohmann::ordered_json&, RunResult&) const override {}
};
}  // namespace

TEST_CASE("auto runs a lesson without a CUDA implementation on the CPU, wherever a GPU answers") {
  const CpuOnlyLesson cpu_only;
  CHECK(backend_for(cpu_only, "auto") == BackendKind::Cpu);
  CHECK(backend_for(cpu_only, "cpu") == BackendKind::Cpu);
  CHECK(backend_for(find_lesson("matmul"), "auto") == resolve_backend("auto"));
  CHECK(backend_for(find_lesson("tensor"), "auto") == resolve_backend("auto"));
  CHECK_THROWS_AS(backend_for(cpu_only, "tpu"), BadInput);
}

}  // namespace dlsys
