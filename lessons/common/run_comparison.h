#pragma once
// Two runs of one lesson side by side: a laptop's run against one recorded on an H100, buckets of 1 MiB against
// 25 MiB, fp32 against bf16. The table holds what a reader compares first: every parameter (both values, marked where
// they differ), the measured struct's top-level numbers with the ratio B / A, and each run's benchmark line. The
// lessons layer computes it; the CLI writes it as JSON and the views only draw it.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/run_result.h"
#include "lessons/common/lesson.h"

namespace dlsys {

// One row of the table: a parameter (text as given) or a measured number.
struct ComparedValue {
  std::string name;  // the parameter's key or the measured value's key ("bucket", "step_us")
  std::string a;     // as the run holds it ("4MiB", "2224.1"); "-" where that run has no such value
  std::string b;
  bool differs = false;
  std::optional<double> ratio_b_over_a;  // measured numbers only, where both are finite and A is not 0
};

struct RunComparison {
  std::string lesson;
  std::string a_name;  // the run file's path, or "live" for a run made in this window
  std::string b_name;
  std::vector<ComparedValue> params;
  std::vector<ComparedValue> measured;
  std::string a_benchmark;  // the run's "benchmark:" line of its report, empty when the lesson has none
  std::string b_benchmark;
};

// The name a run goes by in a comparison: its file, or "live".
std::string compared_run_name(const RunResult& run);

// Runs `a` and `b` of `lesson` compared. Throws BadInput when either is a run of another lesson.
RunComparison compare_runs(const Lesson& lesson, const RunResult& a, const RunResult& b);

// Two run files read as --open-run reads them (format version, every key, parameters giving their theory), both of
// one lesson. Throws BadInput naming the file that is malformed, or both files and their lessons when they differ.
struct RunsToCompare {
  RunResult a;
  RunResult b;
};
RunsToCompare read_runs_to_compare(const std::string& a_path, const std::string& b_path);

// {"lesson", "a", "b", "params": [{"name","a","b","differs"}], "measured": [{..., "ratio_b_over_a"}],
//  "benchmark": {"a", "b"}}; a ratio that cannot be taken is null.
nlohmann::ordered_json to_json(const RunComparison& comparison);

}  // namespace dlsys
