#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "engine/backend.h"
#include "engine/errors.h"
#include "engine/host_buffer.h"
#include "engine/ledger.h"
#include "engine/measure.h"
#include "engine/params.h"
#include "engine/run_result.h"
#include "engine/units.h"

using namespace dlsys;

TEST_CASE("ledger keeps current and peak bytes per tag and in total") {
  MemoryLedger ledger;
  ledger.allocate("weights", 100);
  ledger.allocate("kv", 50);
  ledger.release("kv", 50);
  ledger.allocate("kv", 20);
  CHECK(ledger.current_bytes("weights") == 100);
  CHECK(ledger.current_bytes("kv") == 20);
  CHECK(ledger.peak_bytes("kv") == 50);
  CHECK(ledger.total_peak_bytes() == 150);
  CHECK(ledger.total_current_bytes() == 120);
  CHECK_THROWS_AS(ledger.release("kv", 21), std::logic_error);
  ledger.reset_peaks();
  CHECK(ledger.total_peak_bytes() == 120);
}

TEST_CASE("host buffers record themselves in the ledger while they live") {
  MemoryLedger ledger;
  {
    HostBuffer<float> a(ledger, "scratch", 1000);
    HostBuffer<double> b(ledger, "scratch", 10);
    CHECK(ledger.current_bytes("scratch") == 4080);
    HostBuffer<float> moved = std::move(a);
    CHECK(ledger.current_bytes("scratch") == 4080);
    CHECK(reinterpret_cast<std::uintptr_t>(moved.data()) % 64 == 0);
  }
  CHECK(ledger.current_bytes("scratch") == 0);
  CHECK(ledger.peak_bytes("scratch") == 4080);
}

TEST_CASE("measure warms up, repeats and reports median, min and max") {
  int calls = 0;
  const TimingStats stats = measure([&] { ++calls; }, MeasureOptions{.warmup = 2, .repeats = 5});
  CHECK(calls == 7);
  CHECK(stats.repeats == 5);
  CHECK(stats.min_us <= stats.median_us);
  CHECK(stats.median_us <= stats.max_us);
  const TimingStats even = summarize_us({4, 1, 3, 2}, "test");
  CHECK(even.median_us == 2.5);
  CHECK(even.min_us == 1);
  CHECK(even.max_us == 4);
}

TEST_CASE("measure keeps timing past its repeats until the timed calls reach a minimum total, up to a cap") {
  int calls = 0;
  const TimingStats capped = measure([&] { ++calls; }, MeasureOptions{.warmup = 0, .repeats = 1, .min_total_us = 1e9});
  CHECK(capped.repeats == MeasureOptions::kMaxTimedCalls);
  CHECK(calls == MeasureOptions::kMaxTimedCalls);
  // Calls of 2 ms each (a timer that says so, not a sleep a busy machine would stretch): 5 ms takes exactly three.
  const CallTimer two_ms{"test_timer", [](const std::function<void()>& work) {
                           work();
                           return 2000.0;
                         }};
  const TimingStats slow = measure([] {}, MeasureOptions{.warmup = 0, .repeats = 1, .min_total_us = 5000}, {}, two_ms);
  CHECK(slow.repeats == 3);
  // The upper budget still ends a run of slow calls first.
  const TimingStats budget =
      measure([] {}, MeasureOptions{.warmup = 0, .repeats = 1, .max_total_us = 1, .min_total_us = 5000}, {}, two_ms);
  CHECK(budget.repeats == 1);
}

TEST_CASE("measure_pair alternates its two calls and counts both against the time limit") {
  std::string order;
  int between = 0;
  const auto [a, b] = measure_pair([&] { order += 'a'; }, [&] { order += 'b'; },
                                   MeasureOptions{.warmup = 1, .repeats = 3}, [&] { ++between; });
  CHECK(order == "abababab");  // one warm-up pair, then three timed pairs
  CHECK(between == 8);
  CHECK(a.repeats == 3);
  CHECK(b.repeats == 3);
  // Each call sleeps 2 ms: one pair passes a 3 ms limit, so the second pair is never timed.
  const auto sleep = [] { std::this_thread::sleep_for(std::chrono::milliseconds(2)); };
  const auto [slow_a, slow_b] =
      measure_pair(sleep, sleep, MeasureOptions{.warmup = 0, .repeats = 5, .max_total_us = 3000});
  CHECK(slow_a.repeats == 1);
  CHECK(slow_b.repeats == 1);
}

TEST_CASE("measure takes its samples from the timer it is given") {
  int calls = 0;
  const CallTimer counted{"test_timer", [&](const std::function<void()>& work) {
                            work();
                            return double(++calls);  // 1, 2, 3, ... microseconds
                          }};
  const TimingStats t = measure([] {}, MeasureOptions{.warmup = 1, .repeats = 3}, {}, counted);
  CHECK(t.timer == "test_timer");
  CHECK(t.min_us == 1);
  CHECK(t.median_us == 2);
  CHECK(t.max_us == 3);
  CHECK(measure([] {}, MeasureOptions{}).timer == "steady_clock");
}

TEST_CASE("byte sizes parse with binary and decimal suffixes") {
  CHECK(parse_byte_size("64MiB") == 64ll << 20);
  CHECK(parse_byte_size("1KiB") == 1024);
  CHECK(parse_byte_size("2GB") == 2000000000);
  CHECK(parse_byte_size("4096") == 4096);
  CHECK_FALSE(parse_byte_size("12parsecs").has_value());
  CHECK_FALSE(parse_byte_size("0.5").has_value());
  CHECK(format_bytes_binary(2147483648.0) == "2 GiB");
  CHECK(format_bytes_decimal(2147483648.0) == "2.15 GB");
  CHECK(format_count(134217728) == "134,217,728");
  CHECK(format_count(-1000) == "-1,000");
  CHECK(format_count(999) == "999");
}

TEST_CASE("parameters are checked against their specs with messages that name the value") {
  const std::vector<ParamSpec> specs = {
      {.key = "m", .label = "m", .type = ParamType::Integer, .default_text = "512", .min = 1, .max = 8192},
      {.key = "impl", .label = "impl", .type = ParamType::Choice, .default_text = "all", .choices = {"all", "naive"}},
      {.key = "sizes",
       .label = "sizes",
       .type = ParamType::SizeList,
       .default_text = "64..1024",
       .min = 1,
       .max = 8192},
      {.key = "bytes", .label = "bytes", .type = ParamType::Bytes, .default_text = "64MiB", .min = 1, .max = 1ll << 32},
  };
  const ParamValues defaults = ParamValues::defaults(specs);
  CHECK(defaults.integer("m") == 512);
  CHECK(defaults.list("sizes") == std::vector<double>{64, 128, 256, 512, 1024});
  CHECK(defaults.real("bytes") == double(64 << 20));
  const ParamValues set = ParamValues::parse(specs, {"m=7", "sizes=3,5,9"});
  CHECK(set.integer("m") == 7);
  CHECK(set.list("sizes") == std::vector<double>{3, 5, 9});

  auto message_of = [&](std::vector<std::string> assignments) {
    try {
      ParamValues::parse(specs, assignments);
    } catch (const BadInput& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(message_of({"m=0"}) ==
        "parameter 'm': value '0' is not allowed (out of range); allowed: an integer from 1 to 8192");
  CHECK(message_of({"m=abc"}).find("not a number") != std::string::npos);
  CHECK(message_of({"m=2.5"}).find("not a whole number") != std::string::npos);
  CHECK(message_of({"impl=fast"}).find("one of: all, naive") != std::string::npos);
  CHECK(message_of({"q=1"}) == "unknown parameter 'q'; this lesson's parameters are: m, impl, sizes, bytes");
  CHECK(message_of({"m"}).find("key=value") != std::string::npos);
  CHECK(message_of({"sizes=64..9000"}).find("out of range") != std::string::npos);
  CHECK(message_of({"bytes=-1"}).find("'bytes'") != std::string::npos);
}

TEST_CASE("a run result survives a JSON round trip") {
  RunResult r;
  r.lesson = "matmul";
  r.backend.device = "test cpu";
  r.backend.notes = {"a note"};
  r.params["m"] = "7";
  r.theory = make_values(nlohmann::ordered_json{{"flops", 686.0}});
  r.measured = make_values(nlohmann::ordered_json{{"naive_gflops", 1.5}});
  r.series.push_back({"naive_time", "naive", "measured", "n", "", "time", "us", {{1, 2, 1.5, 2.5}}});
  r.timelines.push_back({"1F1B", "theory", "simulated", "us", {"device 0"}, {{0, 0, 1, "F", 3, 0, "F3", 1}}});
  r.memory = {{"operands", 0, 4096}};
  r.memory_peak_bytes = 4096;
  const auto json = to_json(r);
  const RunResult back = run_result_from_json(json);
  CHECK(to_json(back) == json);
  CHECK(back.series[0].points[0].y_max == 2.5);
  CHECK(back.find_series("naive_time") == &back.series[0]);
  CHECK(back.timelines[0].spans[0].label == "F3");
  CHECK(back.timelines[0].spans[0].direction == 1);
  CHECK_THROWS_AS(run_result_from_json(nlohmann::ordered_json{{"lesson", 3}}), BadInput);
  const std::string csv = to_csv(r);
  CHECK(csv.find("theory,flops,,686,,") != std::string::npos);
  CHECK(csv.find("series,naive,1,2,1.5,2.5") != std::string::npos);
}

TEST_CASE("a result is stale exactly when a parameter differs from the run's") {
  const std::vector<ParamSpec> specs = {
      {.key = "p", .label = "devices", .type = ParamType::Integer, .default_text = "2", .min = 1, .max = 64},
      {.key = "mode", .label = "mode", .type = ParamType::Choice, .default_text = "a", .choices = {"a", "b"}}};
  RunResult result;
  result.params = {{"p", "2"}, {"mode", "a"}};
  ParamValues now = ParamValues::defaults(specs);
  CHECK(params_changed_since(result, now).empty());
  now.set(specs, "p", "4");
  CHECK(params_changed_since(result, now) == std::vector<std::string>{"p: 2 -> 4"});
  now.set(specs, "p", "2");
  CHECK(params_changed_since(result, now).empty());
}

TEST_CASE("an unusable CUDA backend is explained in plain words, the runtime's error kept beside them") {
  const CudaStatus& cuda = cuda_status();
  if (cuda.available) return;  // nothing to explain on a machine with a working GPU
  CHECK_FALSE(cuda.plain_reason.empty());
  CHECK_FALSE(cuda.reason.empty());
  // The plain sentence carries no error codes or runtime jargon.
  CHECK(cuda.plain_reason.find("cuda") == std::string::npos);
  CHECK(cuda.plain_reason.find('(') == std::string::npos);
  if (!cuda.compiled) CHECK(cuda.plain_reason == "this build has no CUDA backend");
}
