// Two runs of one lesson compared (lessons/common/run_comparison.h): an H100 recording of ddp against a quick CPU run
// recorded here, its parameters side by side and its measured numbers' ratios B / A exact; runs of another lesson,
// of another format version or malformed are refused naming the file.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "engine/errors.h"
#include "engine/file_io.h"
#include "engine/json_io.h"
#include "lessons/common/run_comparison.h"
#include "lessons/common/run_lesson.h"
#include "lessons/ddp/ddp_values.h"
#include "lessons/registry.h"
#include "lessons/run_file.h"
#if DLSYS_HAVE_GUI
#include "app/gui/run_compare.h"
#include "app/gui/settings.h"
#include "app/gui/shell.h"
#endif

using namespace dlsys;

namespace {

const std::string kGpuDdp = std::string(DLSYS_TEST_DATA_DIR) + "/gpu/ddp.json";

// A file in the test's own temporary folder.
std::string temp_path(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / "dlsys_run_comparison";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

// The quick CPU run of ddp (2 ranks, 4 layers of width 512), saved as `run --json` saves it; made once per test run.
const std::string& quick_ddp_run() {
  static const std::string path = [] {
    const Lesson& lesson = find_lesson("ddp");
    const ParamValues params = parse_lesson_params(lesson, {"layers=4"}, BackendKind::Cpu, true);
    RunControl control;
    const std::string out = temp_path("cpu_ddp.json");
    write_file_checked(out, dump_json_text(to_json(run_lesson(lesson, params, BackendKind::Cpu, control)), 2));
    return out;
  }();
  return path;
}

// doctest's Contains takes its own string type.
doctest::Contains contains(const std::string& text) { return doctest::Contains(text.c_str()); }

const ComparedValue& row_named(const std::vector<ComparedValue>& rows, const std::string& name) {
  for (const ComparedValue& row : rows)
    if (row.name == name) return row;
  throw std::logic_error("no row " + name);
}

}  // namespace

TEST_CASE("run comparison: an H100 ddp recording against a quick CPU run, parameters and ratios B / A exact") {
  const std::string& cpu_path = quick_ddp_run();
  const RunsToCompare runs = read_runs_to_compare(kGpuDdp, cpu_path);
  const RunComparison c = compare_runs(find_lesson("ddp"), runs.a, runs.b);
  CHECK(c.lesson == "ddp");
  CHECK(c.a_name == kGpuDdp);
  CHECK(c.b_name == cpu_path);

  // Every parameter of both, marked where they differ; where each ran first.
  CHECK(c.params.size() == runs.a.params.size() + 1);
  const ComparedValue& backend = row_named(c.params, "backend");
  CHECK(backend.a == "cuda: NVIDIA H100 80GB HBM3");
  CHECK(backend.b.rfind("cpu: ", 0) == 0);
  CHECK(backend.differs);
  const ComparedValue& layers = row_named(c.params, "layers");
  CHECK(layers.a == "8");
  CHECK(layers.b == "4");
  CHECK(layers.differs);
  const ComparedValue& ranks = row_named(c.params, "n");
  CHECK(ranks.a == "2");
  CHECK(ranks.b == "2");
  CHECK_FALSE(ranks.differs);
  CHECK(row_named(c.params, "steps").differs);  // 3 recorded, 2 in a quick run
  CHECK_FALSE(row_named(c.params, "bucket").differs);

  // The measured struct's top-level numbers, B / A exact; flags and texts are left out.
  const auto* a = runs.a.measured_as<ddp::DdpMeasured>();
  const auto* b = runs.b.measured_as<ddp::DdpMeasured>();
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  const ComparedValue& step = row_named(c.measured, "step_us");
  REQUIRE(step.ratio_b_over_a);
  CHECK(*step.ratio_b_over_a == b->step_us / a->step_us);
  CHECK(step.a == "2473.98");
  // Half the layers, half the gradient: each rank sends 2 (N-1)/N of it, half as many bytes, exactly.
  const ComparedValue& bytes = row_named(c.measured, "comm_bytes");
  CHECK(bytes.a == "16777216");
  CHECK(bytes.b == "8388608");
  CHECK(*bytes.ratio_b_over_a == 0.5);
  CHECK(*row_named(c.measured, "bench_overlap_expected").ratio_b_over_a == 1.0);
  CHECK_FALSE(row_named(c.measured, "bench_overlap_expected").differs);
  for (const ComparedValue& row : c.measured) {
    CHECK(row.name != "bench_met");  // a flag
    CHECK(row.name != "placement");  // a sentence
    CHECK(row.name != "variants");   // a nested table
  }
  // Each run's benchmark line, as its report prints it.
  CHECK(c.a_benchmark.rfind("Benchmark: N = 2", 0) == 0);
  CHECK(c.a_benchmark.find("overlap_fraction 0.75") != std::string::npos);
  CHECK(c.b_benchmark.rfind("Benchmark: N = 2", 0) == 0);

  const nlohmann::ordered_json json = to_json(c);
  CHECK(json["lesson"] == "ddp");
  CHECK(json["params"].size() == c.params.size());
  CHECK(json["measured"].size() == c.measured.size());
  CHECK(json["benchmark"]["a"] == c.a_benchmark);
}

TEST_CASE("run comparison: a run against itself differs nowhere; a ratio over a zero is null") {
  const RunResult run = read_run_file(kGpuDdp);
  const RunComparison same = compare_runs(find_lesson("ddp"), run, run);
  for (const ComparedValue& row : same.params) CHECK_FALSE(row.differs);
  for (const ComparedValue& row : same.measured) {
    CHECK_FALSE(row.differs);
    REQUIRE(row.ratio_b_over_a);
    CHECK(*row.ratio_b_over_a == 1.0);
  }
  RunResult zero = run;
  ddp::DdpMeasured measured = *run.measured_as<ddp::DdpMeasured>();
  measured.idle_us = 0;
  zero.measured = make_values(measured);
  const RunComparison over_zero = compare_runs(find_lesson("ddp"), zero, run);
  CHECK_FALSE(row_named(over_zero.measured, "idle_us").ratio_b_over_a);
  CHECK(row_named(over_zero.measured, "idle_us").differs);
  CHECK(to_json(over_zero)["measured"][7]["name"] == "idle_us");
  CHECK(to_json(over_zero)["measured"][7]["ratio_b_over_a"].is_null());
}

TEST_CASE("run comparison: runs of another lesson, another format version or malformed are refused naming the file") {
  const std::string other = std::string(DLSYS_TEST_DATA_DIR) + "/gpu/zero.json";
  CHECK_THROWS_WITH_AS(read_runs_to_compare(kGpuDdp, other),
                       contains("run file '" + other + "' is a run of lesson 'zero', but run file '" + kGpuDdp +
                                "' is a run of lesson 'ddp'; allowed: two runs of the same lesson"),
                       BadInput);
  CHECK_THROWS_WITH_AS(compare_runs(find_lesson("zero"), read_run_file(kGpuDdp), read_run_file(kGpuDdp)),
                       doctest::Contains("is a run of lesson 'ddp'; allowed: runs of lesson 'zero'"), BadInput);

  nlohmann::ordered_json future = nlohmann::ordered_json::parse(read_input_file(kGpuDdp, "run file"));
  future["recorded"]["format_version"] = 2;
  const std::string future_path = temp_path("future.json");
  write_file_checked(future_path, future.dump());
  CHECK_THROWS_WITH_AS(
      read_runs_to_compare(kGpuDdp, future_path),
      contains("run file '" + future_path + "': run file format version 2 is not understood by this build"), BadInput);

  nlohmann::ordered_json malformed = nlohmann::ordered_json::parse(read_input_file(kGpuDdp, "run file"));
  malformed["measured"].erase("step_us");
  const std::string malformed_path = temp_path("malformed.json");
  write_file_checked(malformed_path, malformed.dump());
  CHECK_THROWS_WITH_AS(read_runs_to_compare(malformed_path, kGpuDdp),
                       contains("run file '" + malformed_path + "': lesson 'ddp': measured.step_us: missing"),
                       BadInput);
}

#if DLSYS_HAVE_GUI
TEST_CASE("run comparison in the window: the replaced run is the previous one, a pinned run goes first") {
  gui::AppState state;
  gui::init_sessions(state);
  gui::open_run_file(kGpuDdp, state);
  gui::LessonSession& session = state.session();
  CHECK(gui::compared_run(session) == nullptr);  // one run: nothing to compare with
  const auto gpu = session.result;
  gui::open_run_file(quick_ddp_run(), state);
  CHECK(session.previous_result == gpu);
  CHECK(gui::compared_run(session) == gpu);

  // Pin the CPU run, then show the H100 run again: B is the pinned run, not the previous one.
  session.pinned_result = session.result;
  CHECK(gui::compared_run(session) == gpu);  // the run on show itself is not compared with
  gui::open_run_file(kGpuDdp, state);
  CHECK(gui::compared_run(session) == session.pinned_result);

  const Lesson& ddp = find_lesson("ddp");
  gui::refresh_comparison(session, ddp);
  CHECK_FALSE(session.comparison);  // the toggle is off
  session.comparing = true;
  gui::refresh_comparison(session, ddp);
  REQUIRE(session.comparison);
  CHECK(session.comparison->table.a_name == kGpuDdp);
  CHECK(session.comparison->table.b_name == quick_ddp_run());
  CHECK(session.comparison->b_params.text("layers") == "4");
  session.pinned_result.reset();  // B is the previous run now: the table follows
  gui::refresh_comparison(session, ddp);
  REQUIRE(session.comparison);
  CHECK(session.comparison->b == session.previous_result);
}
#endif
