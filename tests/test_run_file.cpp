// A run written as JSON reads back as the lesson's own typed values, for every lesson: writing what was read gives
// the same JSON again, byte for byte. Broken files are refused with the key's path or the versions understood.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "engine/errors.h"
#include "engine/json_io.h"
#include "lessons/common/run_lesson.h"
#include "lessons/registry.h"
#include "lessons/run_file.h"

using namespace dlsys;
using json = nlohmann::ordered_json;

namespace {

json run_quick(const std::string& id, const std::vector<std::string>& sets = {}) {
  const Lesson& lesson = find_lesson(id);
  RunControl control;
  const ParamValues params = parse_lesson_params(lesson, sets, BackendKind::Cpu, true);
  // Through text, as a file carries it: doubles must survive the printing and the parsing.
  return parse_ordered_json_input(dump_json_text(to_json(run_lesson(lesson, params, BackendKind::Cpu, control)), 2),
                                  "test");
}

bool is_plain_json(const std::shared_ptr<const LessonValues>& values) { return values_as<json>(values) != nullptr; }

void check_round_trip(const json& written, const std::string& what) {
  INFO(what);
  const RunResult read = run_from_json(written, "test");
  CHECK_FALSE(is_plain_json(read.theory));
  CHECK_FALSE(is_plain_json(read.measured));
  CHECK(read.measured != nullptr);
  CHECK(read.recorded.has_value());
  const std::string again = dump_json_text(to_json(read), 2);
  const std::string first = dump_json_text(written, 2);
  CHECK(again.size() == first.size());
  if (again != first) {
    // The first differing line says which value did not come back.
    std::size_t at = 0;
    while (at < again.size() && at < first.size() && again[at] == first[at]) ++at;
    const std::size_t from = first.rfind('\n', at) == std::string::npos ? 0 : first.rfind('\n', at);
    FAIL_CHECK("differs near: " << first.substr(from, 160) << "\nread back as: " << again.substr(from, 160));
  }
}

// A sentence a CPU run of `lesson` does not write (GPU runs do, under measured.<key>): the run reads back without it,
// and with `sentence` added by hand.
void check_gpu_only_sentence(const std::string& lesson, const std::string& key, const std::string& sentence) {
  json run = run_quick(lesson);
  CHECK_FALSE(run["measured"].contains(key));
  check_round_trip(run, lesson + " without " + key);
  run["measured"][key] = sentence;
  check_round_trip(run, lesson + " with " + key);
}

}  // namespace

TEST_CASE("every lesson's quick run reads back from its JSON as typed values that write the same JSON") {
  for (const Lesson* lesson : all_lessons()) check_round_trip(run_quick(lesson->id()), lesson->id());
}

TEST_CASE("the worked examples read back too (tensor's 4x4 split, flash's two tiles)") {
  check_round_trip(run_quick("tensor", {"example=course"}), "tensor example=course");
  check_round_trip(run_quick("flash", {"example=two_tiles"}), "flash example=two_tiles");
}

TEST_CASE("a run file with a key missing or of the wrong kind is refused with the key's path") {
  const json good = run_quick("allreduce");
  json missing = good;
  missing["measured"]["sweep"][1].erase("busbw_gbps");
  CHECK_THROWS_WITH_AS(run_from_json(missing, "run file 'x'"),
                       doctest::Contains("measured.sweep[1].busbw_gbps: missing"), BadInput);
  json wrong_kind = good;
  wrong_kind["measured"]["wrong"] = "none";
  CHECK_THROWS_WITH_AS(run_from_json(wrong_kind, "run file 'x'"),
                       doctest::Contains("measured.wrong: expected an integer"), BadInput);
  json bad_series = good;
  bad_series["series"][0].erase("name");
  CHECK_THROWS_WITH_AS(run_from_json(bad_series, "run file 'x'"), doctest::Contains("series[0].name: missing"),
                       BadInput);
  json bad_span = run_quick("schedules");
  bad_span["timeline"][0]["spans"][2]["start"] = "soon";
  CHECK_THROWS_WITH_AS(run_from_json(bad_span, "run file 'x'"),
                       doctest::Contains("timeline[0].spans[2].start: expected a number"), BadInput);
}

TEST_CASE("a run file whose numbers a view cannot draw, or whose indices leave their arrays, is refused") {
  const auto refused = [](const json& run, const char* text) {
    CHECK_THROWS_WITH_AS(run_from_json(run, "run file 'x'"), doctest::Contains(text), BadInput);
  };
  json nan = run_quick("matmul");
  nan["series"][0]["points"][0][1] = nullptr;
  refused(nan, "series[0].points[0][1]: expected a finite number, not null");
  json wraps = run_quick("matmul");
  wraps["backend"]["repeats"] = std::int64_t{1} << 40;
  refused(wraps, "backend.repeats: expected an integer from");
  json backend = run_quick("matmul");
  backend["backend"]["kind"] = "tpu";
  refused(backend, "backend.kind: 'tpu' is not a backend; allowed: cpu, cuda");
  json roof = run_quick("matmul");
  roof["measured"]["roof_bandwidth_gbps"] = -3;
  refused(roof, "measured.roof_bandwidth_gbps: is not positive; allowed: more than 0 GB/s");
  json lane = run_quick("schedules");
  lane["timeline"][0]["spans"][0]["lane"] = 99;
  refused(lane, "timeline[0].spans[0].lane: 99 is not an index into lanes");
  json early = run_quick("schedules");
  early["timeline"][0]["spans"][0]["start"] = -1e308;
  refused(early, "timeline[0].spans[0].start: is negative");
  json ridge = run_quick("roofline");
  ridge["measured"]["sweep_nearest_ridge"] = 100000;
  refused(ridge, "measured.sweep_nearest_ridge: 100000 is not an index into sweep_points");
  json sample = run_quick("quant");
  sample["measured"]["sparse_sample_rows"] = 1000;
  refused(sample, "measured.sparse_sample: has");
  json algorithms = run_quick("allreduce");
  algorithms["measured"]["comparison"]["algorithms"] = json::array();
  refused(algorithms, "measured.comparison.algorithms: is empty");
  json grid = run_quick("moe", {"tokens=64", "hidden=32", "ffn=64", "ranks=4"});
  grid["measured"]["dispatch_bytes"].erase(grid["measured"]["dispatch_bytes"].size() - 1);
  refused(grid, "measured.dispatch_bytes: has 15 elements; expected 16 (ranks x ranks)");
  json columns = run_quick("moe", {"tokens=64", "hidden=32", "ffn=64"});
  columns["measured"]["kept"].erase(0);
  refused(columns, "measured.kept: has 7 elements; expected 8");
}

TEST_CASE("a run file whose parameters were changed after the run is refused: its theory no longer follows") {
  json ddp = run_quick("ddp");
  ddp["params"]["n"] = "64";
  CHECK_THROWS_WITH_AS(run_from_json(ddp, "run file 'x'"), doctest::Contains("does not follow from the file's params"),
                       BadInput);
  json out_of_range = run_quick("ddp");
  out_of_range["params"]["n"] = "-4";
  CHECK_THROWS_WITH_AS(run_from_json(out_of_range, "run file 'x'"), doctest::Contains("parameter 'n'"), BadInput);
}

TEST_CASE("a run file of another format version, without a record, or of an unknown lesson is refused") {
  const json good = run_quick("zero");
  json future = good;
  future["recorded"]["format_version"] = kRunFileFormatVersion + 1;
  const std::string understood = "understood: " + understood_run_format_versions();
  CHECK_THROWS_WITH_AS(run_from_json(future, "run file 'x'"), doctest::Contains(understood.c_str()), BadInput);
  json unrecorded = good;
  unrecorded.erase("recorded");
  CHECK_THROWS_WITH_AS(run_from_json(unrecorded, "run file 'x'"), doctest::Contains("not a recorded run"), BadInput);
  const json state = {{"lesson", "zero"}, {"step", 1}, {"params", json::object()}};
  CHECK_THROWS_WITH_AS(run_from_json(state, "run file 'x'"), doctest::Contains("not a recorded run"), BadInput);
  json unknown = good;
  unknown["lesson"] = "teleport";
  CHECK_THROWS_WITH_AS(run_from_json(unknown, "run file 'x'"), doctest::Contains("unknown lesson 'teleport'"),
                       BadInput);
}

TEST_CASE("every run records where, when and by which version it was made") {
  const json written = run_quick("fusion");
  REQUIRE(written.contains("recorded"));
  const json& recorded = written["recorded"];
  CHECK(recorded["format_version"] == kRunFileFormatVersion);
  CHECK(recorded["lab_version"] == lab_version());
  CHECK_FALSE(recorded["host"].get<std::string>().empty());
  const std::string date = recorded["date_utc"];
  REQUIRE(date.size() == 20);
  CHECK(date[4] == '-');
  CHECK(date[10] == 'T');
  CHECK(date.back() == 'Z');
  // The keys other tools read keep their places; the record comes last.
  std::vector<std::string> keys;
  for (const auto& [key, value] : written.items()) keys.push_back(key);
  CHECK(keys == std::vector<std::string>{"lesson", "backend", "params", "theory", "measured", "series", "timeline",
                                         "memory", "recorded"});
}

TEST_CASE("the sentences only a GPU run writes read back too, and runs recorded before them still open") {
  // matmul's slope sentence and the pipelines' taking-turns sentence are written on the CUDA backend only; a CPU run
  // with them added by hand stands in for one, and the same run without them for a recording made before them.
  check_gpu_only_sentence("matmul", "slope_caveat", "The fitted slopes are far from 3");
  check_gpu_only_sentence("bubble", "serial_caveat", "The devices took turns");
}

TEST_CASE("tensor's GPU scaling sentence reads back, and a run without it still opens") {
  check_gpu_only_sentence("tensor", "gpu_scaling_caveat", "On this GPU per-rank compute did not fall with t");
}

TEST_CASE("flash's figures per precision, which only a GPU run writes, read back too") {
  // A CPU run with a GPU run's keys added by hand, in the order a GPU run writes them.
  json flash = run_quick("flash");
  json& measured = flash["measured"];
  CHECK_FALSE(measured.contains("bf16_flash_kernel"));
  for (const std::string precision : {"fp32", "bf16"}) {
    const std::string p = precision + "_";
    measured[p + "flash_kernel"] = "v4_flash_tensor";
    for (const std::string kernel : {"naive", "flash"}) {
      measured[p + kernel + "_ms"] = 1.25;
      measured[p + kernel + "_tflops"] = 150.5;
      measured[p + "max_abs_err_" + kernel] = 0.001;
      measured[p + kernel + "_peak_bytes"] = 1 << 20;
    }
    measured[p + "time_ratio_flash_over_naive"] = 0.5;
    measured[p + "accuracy_rule_met"] = 1;
  }
  check_round_trip(flash, "flash with both precisions");
}
