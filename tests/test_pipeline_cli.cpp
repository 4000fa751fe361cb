// The `bubble` and `schedules` lessons through the CLI, in-process: bad input exits 2 with a message, runs print the
// documented JSON keys, the theory matches the closed forms, and exports write an SVG and a Chrome trace.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "engine/params.h"
#include "lessons/pipeline_common/pipeline_lesson.h"
#include "lessons/pipeline_common/pipeline_values.h"
#include "lessons/registry.h"
#include "tests/support/cli_capture.h"

using namespace dlsys;

namespace {

const auto cli = testing::run_cli_captured;

// Small and quick: the real executor still runs, on tiny matrices.
// Pinned to the CPU: these tests check the CPU executor's modes, also on machines where auto would pick CUDA.
std::vector<std::string> quick(std::vector<std::string> args) {
  for (const char* set : {"hidden=32", "microbatch=4", "repeats=1"}) {
    args.push_back("--set");
    args.push_back(set);
  }
  args.insert(args.end(), {"--backend", "cpu"});
  return args;
}

void refused(const std::vector<std::string>& args, const std::string& expected) {
  testing::check_refused(cli(args), expected);
}

}  // namespace

TEST_CASE("pipeline lessons: bad input exits 2 with the parameter, the value and what is allowed") {
  for (const char* lesson : {"bubble", "schedules"}) {
    const std::string l = lesson;
    refused({"run", l, "--set", "p=0"}, "parameter 'p': value '0' is not allowed (out of range)");
    refused({"run", l, "--set", "m=0"}, "parameter 'm': value '0' is not allowed (out of range)");
    refused({"run", l, "--set", "schedule=2f2b"}, "one of: gpipe, 1f1b, interleaved, zb-h1, dualpipe, dualpipev");
    refused({"run", l, "--set", "schedule=interleaved", "--set", "p=4", "--set", "m=6"}, "must be a multiple of p");
    refused({"run", l, "--set", "schedule=interleaved", "--set", "v=0"}, "parameter 'v'");
    refused({"run", l, "--set", "schedule=dualpipe", "--set", "p=3", "--set", "m=12"}, "p must be even");
    refused({"run", l, "--set", "schedule=dualpipe", "--set", "p=4", "--set", "m=6"}, "at least 2p = 8");
    refused({"run", l, "--set", "schedule=dualpipe", "--set", "p=4", "--set", "m=9"}, "m must be even");
    refused({"run", l, "--set", "schedule=dualpipev", "--set", "p=4", "--set", "m=7"}, "at least 2p = 8");
    refused({"run", l, "--set", "b=1", "--set", "w=1"}, "parameter 'b': value '1' is not allowed with notation=full");
    refused({"run", l, "--set", "fb=1.5"}, "parameter 'fb': value '1.5' is not allowed");
    refused({"run", l, "--set", "f=-1"}, "parameter 'f'");
    refused({"run", l, "--set", "notation=deepseek"}, "one of: full, input");
    refused({"run", l, "--set", "mode=fast"}, "one of: auto, concurrent, replayed");
    refused({"run", l, "--set", "hidden=4096", "--set", "microbatch=4096", "--set", "m=256"}, "host memory");
    // Minutes of real work are refused before they start, with the estimate and the parameter that raises the limit.
    refused({"run", l, "--set", "hidden=2048", "--set", "microbatch=512", "--set", "max_minutes=0.1"},
            "more than max_minutes = 0.1");
    const int threads = static_cast<int>(std::thread::hardware_concurrency());
    if (threads > 0 && threads < 32)
      refused({"run", l, "--set", "mode=concurrent", "--set", "p=" + std::to_string(threads + 1)},
              "parameter 'mode': value 'concurrent' is not allowed");
  }
  refused({"run", "bubble", "--set", "sweep=0,4"}, "parameter 'sweep'");
  refused({"run", "bubble", "--set", "schedule=dualpipe", "--set", "p=4", "--set", "m=8", "--set", "sweep=1,2,3"},
          "no m in it can run schedule 'dualpipe'");
  refused({"export", "schedules"}, "export needs --svg FILE or --trace FILE.json");
}

TEST_CASE("schedules: run --json has the documented keys, exact theory and a correct gradient") {
  const auto r =
      cli(quick({"run", "schedules", "--set", "schedule=1f1b", "--set", "p=2", "--set", "m=8", "--json", "-"}));
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto& t = j["theory"];
  CHECK(t["bubble_fraction"].get<double>() == doctest::Approx(1.0 / 9.0).epsilon(1e-12));
  CHECK(t["bubble_ratio"].get<double>() == doctest::Approx(1.0 / 8.0).epsilon(1e-12));
  CHECK(t["makespan"].get<double>() == doctest::Approx(27.0));  // (m + p - 1)(F + B) with F = 1, B = 2
  CHECK(t["peak_inflight"] == nlohmann::json::array({2, 1}));
  CHECK(t["param_copies"] == 1);
  CHECK(t["comparison"].size() == 6);
  for (const auto& e : t["comparison"])
    if (e["schedule"] == "dualpipe") CHECK(e["param_copies"] == 2);
  const auto& m = j["measured"];
  for (const char* key : {"bubble_fraction", "makespan_us", "grad_max_rel_err"}) CHECK(m[key].get<double>() >= 0);
  CHECK(m["peak_activation_bytes"].size() == 2);
  CHECK(m["peak_activation_bytes"][0].get<double>() > 0);
  CHECK(m["grad_max_rel_err"].get<double>() < 1e-4);
  CHECK((m["mode"] == "concurrent" || m["mode"] == "replayed"));
  // The gap to theory in its two parts, as the measured step draws them: they add up to the whole gap.
  const double waiting = m["mode"] == "replayed" ? 0.0 : m["bubble_gap_waiting"].get<double>();
  CHECK(m.contains("bubble_gap_waiting") == (m["mode"] != "replayed"));
  CHECK(waiting + m["bubble_gap_uneven_op_times"].get<double>() ==
        doctest::Approx(m["bubble_fraction_minus_theory"].get<double>()).epsilon(1e-9));
  CHECK(j["backend"]["emulated"] == true);
  REQUIRE(j["timeline"].size() >= 2);
  CHECK(j["timeline"][0]["source"] == "theory");
  CHECK(j["timeline"][1]["source"] == "measured");
  CHECK(j["timeline"][0]["spans"].size() == 2 * 2 * 8);  // F and B of 8 micro-batches on 2 devices
}

TEST_CASE("schedules: the notation switch changes what b means, not the schedule's cost") {
  const auto full = cli(quick({"run", "schedules", "--set", "schedule=zb-h1", "--set", "p=4", "--set", "m=8", "--set",
                               "b=2", "--set", "w=1", "--set", "mode=replayed", "--json", "-"}));
  const auto input =
      cli(quick({"run", "schedules", "--set", "schedule=zb-h1", "--set", "p=4", "--set", "m=8", "--set",
                 "notation=input", "--set", "b=1", "--set", "w=1", "--set", "mode=replayed", "--json", "-"}));
  REQUIRE(full.code == 0);
  REQUIRE(input.code == 0);
  const auto a = nlohmann::json::parse(full.out)["theory"], b = nlohmann::json::parse(input.out)["theory"];
  CHECK(a["makespan"] == b["makespan"]);
  CHECK(a["formula"] == "(p-1)(F+B-2W)");
  CHECK(b["formula"] == "(p-1)(F+B-W)");
  CHECK(a["bubble_time_formula"].get<double>() == doctest::Approx(3.0));  // (4-1)(1+2-2)
}

TEST_CASE("bubble: the course's numbers and the m sweep") {
  const Lesson& lesson = find_lesson("bubble");
  auto theory_for = [&](int p, int m) {
    const auto params = ParamValues::parse(lesson.params(), {"p=" + std::to_string(p), "m=" + std::to_string(m)});
    const auto values = lesson.theory(params);
    const auto* theory = values_as<pipeline_lesson::PipelineTheory>(values);
    REQUIRE(theory != nullptr);
    return *theory;
  };
  CHECK(theory_for(2, 1).bubble_fraction == doctest::Approx(0.5).epsilon(1e-12));
  CHECK(theory_for(2, 4).bubble_fraction == doctest::Approx(0.2).epsilon(1e-12));
  CHECK(theory_for(2, 10).bubble_fraction == doctest::Approx(1.0 / 11).epsilon(1e-12));
  CHECK(theory_for(2, 4).course_misprint == doctest::Approx(-0.6));
  CHECK(theory_for(2, 4).megatron_bubble_ratio == doctest::Approx(0.25));

  const auto r = cli(quick({"run", "bubble", "--set", "sweep=1,2,4", "--json", "-"}));
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  bool measured = false, formula = false;
  for (const auto& s : j["series"]) {
    if (s["role"] == "measured") {
      measured = true;
      CHECK(s["points"].size() == 3);
    }
    if (s["name"].get<std::string>().find("(p-1)/(m+p-1)") == 0) {
      formula = true;
      CHECK(s["points"][0][1].get<double>() == doctest::Approx(0.5));
      CHECK(s["points"][2][1].get<double>() == doctest::Approx(0.2));
    }
  }
  CHECK(measured);
  CHECK(formula);
}

namespace {

std::string read_text(const std::string& path) {
  std::ifstream file(path);
  return std::string((std::istreambuf_iterator<char>(file)), {});
}

// The metadata event named `name` for (pid, tid), or null.
nlohmann::json metadata(const nlohmann::json& events, const std::string& name, int pid, int tid = -1) {
  for (const auto& e : events)
    if (e["ph"] == "M" && e["name"] == name && e["pid"] == pid && (tid < 0 || e.value("tid", -1) == tid)) return e;
  return nullptr;
}

}  // namespace

TEST_CASE("export without a run: the simulated schedule, titled as theory, with an axis and a legend") {
  const std::string svg = "pipeline_test_theory.svg", trace = "pipeline_test_theory.json";
  const auto r = cli({"export", "schedules", "--set", "schedule=zb-h1", "--set", "p=3", "--set", "m=4", "--svg", svg,
                      "--trace", trace});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::string text = read_text(svg);
  CHECK(text.find("<svg") != std::string::npos);
  CHECK(
      text.find("class=\"title\" x=\"10\" y=\"32\" font-size=\"22\" font-weight=\"bold\">Zero Bubble H1: p = 3, m = 4 "
                "(theory): simulated from the parameters, no run</text>") != std::string::npos);
  CHECK(text.find("theory only, simulated from the parameters") != std::string::npos);
  CHECK(text.find("<g class=\"axis\">") != std::string::npos);
  CHECK(text.find("time (cost units)</text>") != std::string::npos);
  CHECK(text.find("<g class=\"legend\">") != std::string::npos);
  for (const char* entry : {">F: forward<", ">W: weight gradient (deferred)<", ">bubble: idle<"})
    CHECK(text.find(entry) != std::string::npos);
  CHECK(text.find("class=\"bubble\"") != std::string::npos);
  CHECK(text.find(">W3<") != std::string::npos);
  CHECK(text.find("measured") == std::string::npos);

  const auto events = nlohmann::json::parse(read_text(trace))["traceEvents"];
  const auto process = metadata(events, "process_name", 1);
  REQUIRE(!process.is_null());
  CHECK(process["args"]["name"] == "Zero Bubble H1: p = 3, m = 4 (theory) [cost units: 1 unit drawn as 1 ms]");
  CHECK(metadata(events, "process_sort_index", 1)["args"]["sort_index"] == 0);
  for (int lane = 0; lane < 3; ++lane) {
    CAPTURE(lane);
    const auto thread = metadata(events, "thread_name", 1, lane + 1);
    REQUIRE(!thread.is_null());
    CHECK(thread["args"]["name"] == "device " + std::to_string(lane));
    CHECK(metadata(events, "thread_sort_index", 1, lane + 1)["args"]["sort_index"] == lane);
  }
  bool w3 = false;
  for (const auto& e : events)
    if (e["ph"] == "X" && e["name"] == "W3") {
      w3 = true;
      CHECK(e["args"]["source"] == "theory");
      CHECK(e["dur"].get<double>() == doctest::Approx(1000));  // W costs 1 unit, drawn as 1 ms
    }
  CHECK(w3);
  std::remove(svg.c_str());
  std::remove(trace.c_str());
}

TEST_CASE("export without a run needs no memory, cores or time for a run; export --run does") {
  // Sizes whose run would need more host memory than this machine has (the run's memory check), and hours.
  const std::vector<std::string> huge{"--set", "hidden=4096", "--set", "microbatch=4096",
                                      "--set", "m=256",       "--set", "max_minutes=0.1"};
  for (const char* lesson : {"schedules", "bubble"}) {
    const std::string svg = std::string("pipeline_test_huge_") + lesson + ".svg";
    std::vector<std::string> args{"export", lesson, "--backend", "cpu", "--svg", svg};
    args.insert(args.end(), huge.begin(), huge.end());
    const auto drawn = cli(args);
    INFO(drawn.err);
    CHECK(drawn.code == 0);
    CHECK(read_text(svg).find("<svg") != std::string::npos);
    std::remove(svg.c_str());
    args.push_back("--run");
    refused(args, "lower hidden");  // memory or time, whichever the lesson checks first
    CHECK_FALSE(std::ifstream(svg).good());
  }
}

TEST_CASE("export --run: measured and theory, each timeline a process, theory stretched to the measured time") {
  const std::string svg = "pipeline_test_export.svg", trace = "pipeline_test_export.json";
  const auto r = cli(quick({"export", "schedules", "--run", "--set", "schedule=zb-h1", "--set", "p=3", "--set", "m=4",
                            "--set", "mode=replayed", "--svg", svg, "--trace", trace}));
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::string text = read_text(svg);
  CHECK(text.find("Zero Bubble H1: p = 3, m = 4 (measured, replayed) beside its theory</text>") != std::string::npos);
  CHECK(text.find("measured on the cpu backend") != std::string::npos);
  CHECK(text.find("time (us)</text>") != std::string::npos);
  CHECK(text.find("time (cost units)</text>") != std::string::npos);

  const auto events = nlohmann::json::parse(read_text(trace))["traceEvents"];
  // Timelines: theory (cost units), measured (us), the measured op times replayed (us); one process each, in order.
  for (int pid = 1; pid <= 3; ++pid) {
    CAPTURE(pid);
    REQUIRE(!metadata(events, "process_name", pid).is_null());
    CHECK(metadata(events, "process_sort_index", pid)["args"]["sort_index"] == pid - 1);
    CHECK(metadata(events, "thread_name", pid, 3)["args"]["name"] == "device 2");
  }
  CHECK(metadata(events, "process_labels", 1)["args"]["labels"] == "theory, simulated");
  CHECK(metadata(events, "process_labels", 2)["args"]["labels"] == "measured, replayed");
  const std::string theory_name = metadata(events, "process_name", 1)["args"]["name"];
  CHECK(theory_name.find("stretched to the measured makespan") != std::string::npos);
  // The theory's last span ends where the measured step ends: the same time scale in Perfetto.
  double theory_end = 0, measured_end = 0;
  for (const auto& e : events)
    if (e["ph"] == "X") {
      const double end = e["ts"].get<double>() + e["dur"].get<double>();
      if (e["pid"] == 1) theory_end = std::max(theory_end, end);
      if (e["pid"] == 2) {
        measured_end = std::max(measured_end, end);
        CHECK(e["args"]["source"] == "measured");
      }
    }
  CHECK(theory_end == doctest::Approx(measured_end).epsilon(1e-9));
  std::remove(svg.c_str());
  std::remove(trace.c_str());
  const auto b = cli(quick({"export", "bubble", "--run", "--set", "sweep=2", "--svg", svg}));
  CHECK(b.code == 0);
  std::remove(svg.c_str());
}

TEST_CASE("in-flight activations read back from a timeline match the simulator's count") {
  using namespace dlsys::pipeline;
  for (ScheduleKind kind : kAllSchedules) {
    const Schedule s = make_schedule({kind, 4, 8, 2});
    OpCosts c;
    c.fb = 2.5;
    const Timing t = simulate(s, c);
    const Timeline line = pipeline_lesson::to_timeline(s, t, c, "x", "theory", "simulated", "units");
    for (int d = 0; d < 4; ++d) {
      INFO(schedule_id(kind), " device ", d);
      CHECK(pipeline_lesson::in_flight_from_timeline(line, d).peak == in_flight(t, d).peak);
    }
  }
}

TEST_CASE("hovering a span explains the op, its inputs and why it waited") {
  using namespace dlsys::pipeline;
  const Schedule s = make_schedule({ScheduleKind::OneFOneB, 2, 2, 1});
  OpCosts c;
  c.p2p = 0.5;
  const Timing t = simulate(s, c);
  const Timeline line = pipeline_lesson::to_timeline(s, t, c, "x", "theory", "simulated", "units");
  auto lines_for = [&](int lane, const std::string& label) {
    for (int i = 0; i < static_cast<int>(line.spans.size()); ++i)
      if (line.spans[i].lane == lane && line.spans[i].label == label)
        return pipeline_lesson::describe_span(s, line, i, c.p2p);
    return std::vector<std::string>{};
  };
  auto joined = [](const std::vector<std::string>& v) {
    std::string all;
    for (const auto& l : v) all += l + "\n";
    return all;
  };
  // F0 [0, 1], arrives at 1.5; F0 on device 1 [1.5, 2.5]; its full B0 [2.5, 4.5], arriving at 5. Device 0 ran F1 [1,
  // 2].
  const std::string b0 = joined(lines_for(0, "B0"));
  INFO(b0);
  CHECK(b0.find("full backward") != std::string::npos);
  CHECK(b0.find("needs B0 of stage 1 on device 1") != std::string::npos);
  CHECK(b0.find("arrives at 5") != std::string::npos);
  CHECK(b0.find("waited 3 units for B0 from device 1") != std::string::npos);
  const std::string f1 = joined(lines_for(0, "F1"));
  CHECK(f1.find("started as soon as the device finished F0") != std::string::npos);
}
