#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "engine/backend.h"
#include "engine/errors.h"
#include "engine/params.h"
#include "lessons/allreduce/allreduce_values.h"
#include "lessons/registry.h"
#include "tests/support/cli_capture.h"

using namespace dlsys;

namespace {
testing::CliOutcome run_allreduce(const std::vector<std::string>& sets, bool json = true) {
  return testing::run_lesson_captured("allreduce", sets, json);
}

bool has_note(const nlohmann::json& json, const std::string& text) {
  for (const auto& note : json["backend"]["notes"])
    if (note.get<std::string>().find(text) != std::string::npos) return true;
  return false;
}
}  // namespace

TEST_CASE("allreduce: bad input exits 2 naming the parameter, the value and what is allowed") {
  const auto check = testing::refusal_check("allreduce");
  check({"n=0"}, "parameter 'n': value '0' is not allowed (out of range); allowed: an integer from 1 to 64");
  check({"n=-3"}, "parameter 'n'");
  check({"bytes=0"}, "parameter 'bytes': value '0' is not allowed (out of range)");
  check({"bytes=-4"}, "parameter 'bytes': value '-4' is not allowed");
  check({"bytes=6"}, "parameter 'bytes': value '6' is not allowed (6 bytes is not a whole number of float32 elements)");
  check({"sizes=0..1KiB"}, "parameter 'sizes'");
  check({"sizes=1KiB,1001"}, "parameter 'sizes': value '1KiB,1001' is not allowed");
  check({"algo=fastest"}, "one of: ring, naive, library");
  check({"op=alltoall"}, "one of: allreduce, reduce_scatter, all_gather");
  check({"algo=library", "sizes=1KiB", "bytes=1KiB"},
        "parameter 'algo': value 'library' is not allowed on the cpu backend");
  // Sizes that cannot fit are refused before anything is allocated.
  check({"n=64", "bytes=16GiB", "sizes=1KiB"}, "of host memory is available; lower n, bytes or sizes");
  // So are runs of minutes, with the estimate.
  check({"n=8", "bytes=256MiB", "sizes=256MiB", "repeats=100", "max_minutes=0.1"}, "more than max_minutes = 0.1");
}

TEST_CASE("allreduce run: the documented JSON keys, zero wrong elements, exact theory") {
  const auto r = run_allreduce({"n=3", "bytes=1000", "sizes=4,12,1KiB,40KiB", "repeats=1"});
  REQUIRE(r.code == 0);
  const auto json = nlohmann::json::parse(r.out);
  CHECK(json["lesson"] == "allreduce");
  CHECK(json["backend"]["emulated"] == true);
  const auto& t = json["theory"];
  CHECK(t["steps"] == 4);
  CHECK(t["bytes_sent_per_rank"].get<double>() == doctest::Approx(2.0 * 2 / 3 * 1000));
  CHECK(t["busbw_factor"].get<double>() == doctest::Approx(4.0 / 3));
  const auto& m = json["measured"];
  for (const char* key : {"time_us", "algbw_gbps", "busbw_gbps", "wrong", "ceiling_gbps", "alpha_us", "beta_gbps"})
    CHECK_MESSAGE(m.contains(key), key);
  CHECK(m["wrong"] == 0);
  CHECK(m["sweep_wrong"] == 0);
  CHECK(m["time_us"].get<double>() > 0);
  CHECK(m["busbw_gbps"].get<double>() == doctest::Approx(m["algbw_gbps"].get<double>() * 4.0 / 3));
  CHECK(m["ceiling_gbps"].get<double>() > 0);
  // 250 floats over 3 ranks: chunks 84, 83, 83; the busiest rank sends all chunks but its owned one, twice.
  CHECK(m["bytes_sent_max_rank"] == 2 * (250 - 83) * 4);
  // The ceiling is measured at every size with the ranks' own threads; the figures behind it at S keep their keys.
  for (const char* key : {"memcpy_one_thread_gbps", "stream_copy_one_thread_gbps", "memcpy_threads_gbps",
                          "stream_copy_threads_gbps", "copy_threads", "copy_probe_bytes"})
    CHECK_MESSAGE(m.contains(key), key);
  CHECK(m["copy_threads"] == 3);
  CHECK(m["copy_probe_bytes"] == 1332);  // what a rank sends at S = 1000 B: 4/3 x 1000, in whole floats
  CHECK(m["ceiling_gbps"].get<double>() ==
        doctest::Approx(std::max(m["memcpy_threads_gbps"].get<double>(), m["stream_copy_threads_gbps"].get<double>()) /
                        3));
  CHECK(m["busbw_fraction_of_ceiling"].get<double>() ==
        doctest::Approx(m["busbw_gbps"].get<double>() / m["ceiling_gbps"].get<double>()));
  // nccl-tests' table, one row per swept size, each checked and each with its own ceiling.
  const auto& sweep = m["sweep"];
  REQUIRE(sweep.size() == 4);
  const double sizes[] = {4, 12, 1024, 40960};
  for (std::size_t i = 0; i < 4; ++i) {
    INFO("row ", i);
    CHECK(sweep[i]["bytes"] == sizes[i]);
    CHECK(sweep[i]["count"] == sizes[i] / 4);
    CHECK(sweep[i]["wrong"] == 0);
    CHECK(sweep[i]["ceiling_gbps"].get<double>() > 0);
    CHECK(sweep[i]["busbw_gbps"].get<double>() == doctest::Approx(sweep[i]["algbw_gbps"].get<double>() * 4.0 / 3));
    CHECK(sweep[i]["above_ceiling"] == (sweep[i]["busbw_gbps"].get<double>() > sweep[i]["ceiling_gbps"].get<double>()));
  }
  std::vector<std::string> ids;
  for (const auto& s : json["series"]) ids.push_back(s["id"]);
  // A busbw above its ceiling is drawn apart, with a caveat that says why; without one there is no such series.
  bool any_above = false;
  for (const auto& row : sweep) any_above = any_above || row["above_ceiling"].get<bool>();
  const bool has_above_series = std::find(ids.begin(), ids.end(), "busbw_above_ceiling") != ids.end();
  CHECK(has_above_series == any_above);
  bool above_caveat = false;
  for (const auto& c : m["caveats"])
    above_caveat = above_caveat || c.get<std::string>().find("above the copy ceiling") != std::string::npos;
  CHECK(above_caveat == (any_above || (m["busbw_gbps"].get<double>() > m["ceiling_gbps"].get<double>())));
  ids.erase(std::remove(ids.begin(), ids.end(), "busbw_above_ceiling"), ids.end());
  // The comparison of algorithms (all-reduce, N <= 8) adds one busbw series per algorithm, after the lesson's own.
  const std::vector<std::string> algo_ids{"busbw_algo_ring", "busbw_algo_recursive_doubling", "busbw_algo_rabenseifner",
                                          "busbw_algo_direct", "busbw_algo_naive"};
  REQUIRE(ids.size() > algo_ids.size());
  CHECK(std::vector<std::string>(ids.end() - 5, ids.end()) == algo_ids);
  ids.resize(ids.size() - 5);
  // With the ring's fit, the model curves of the ring and recursive doubling come first.
  for (const char* model : {"busbw_model_recursive_doubling", "busbw_model_ring"})
    if (!ids.empty() && ids.back() == model) ids.pop_back();
  // Tiny sizes timed once can leave the bandwidth term unmeasurable: then no model is drawn, and the run says why.
  if (m["alpha_us"].is_null()) {
    CHECK(m["beta_gbps"].is_null());
    CHECK(m["alpha_term_us"].is_null());
    CHECK(has_note(json, "no model is fitted"));
    CHECK(ids == std::vector<std::string>{"busbw_measured", "copy_ceiling", "time_measured", "wrong_elements"});
  } else {
    CHECK(m["beta_gbps"].get<double>() > 0);
    // The two terms at S: 4 steps x alpha, and 4/3 x 1000 bytes / beta.
    CHECK(m["alpha_term_us"].get<double>() == doctest::Approx(4 * m["alpha_us"].get<double>()));
    CHECK(m["beta_term_us"].get<double>() == doctest::Approx(4000.0 / 3 / (m["beta_gbps"].get<double>() * 1e3)));
    CHECK(ids == std::vector<std::string>{"busbw_measured", "busbw_fit", "copy_ceiling", "time_measured", "time_fit",
                                          "wrong_elements"});
  }
}

TEST_CASE("allreduce run: reduce-scatter, all-gather and the naive way are all checked") {
  for (const char* op : {"op=allreduce", "op=reduce_scatter", "op=all_gather"})
    for (const char* algo : {"algo=ring", "algo=naive"}) {
      const auto r = run_allreduce({op, algo, "n=5", "bytes=4004", "sizes=4,36", "repeats=1", "segment=64"});
      INFO(op, " ", algo, " ", r.err);
      REQUIRE(r.code == 0);
      const auto json = nlohmann::json::parse(r.out);
      CHECK(json["measured"]["wrong"] == 0);
      CHECK(json["measured"]["sweep_wrong"] == 0);
      const double factor = std::string(op) == "op=allreduce" ? 1.6 : 0.8;
      CHECK(json["theory"]["busbw_factor"].get<double>() == doctest::Approx(factor));
    }
}

TEST_CASE("allreduce run: N = 1 has busbw 0 by definition and says so") {
  const auto r = run_allreduce({"n=1", "bytes=4KiB", "sizes=1KiB", "repeats=1"});
  REQUIRE(r.code == 0);
  const auto json = nlohmann::json::parse(r.out);
  CHECK(json["measured"]["busbw_gbps"] == 0.0);
  CHECK(json["measured"]["wrong"] == 0);
  CHECK(json["measured"]["alpha_us"].is_null());
  CHECK(has_note(json, "N = 1: busbw is 0 by definition"));
}

TEST_CASE("allreduce run: more ranks than hardware threads are time-shared, and the measured step says so") {
  const int threads = static_cast<int>(std::thread::hardware_concurrency());
  const int ranks = threads + 1;
  const auto r = run_allreduce({"n=" + std::to_string(ranks), "bytes=4KiB", "sizes=1KiB", "repeats=1"});
  REQUIRE(r.code == 0);
  const auto json = nlohmann::json::parse(r.out);
  const auto& m = json["measured"];
  CHECK(m["wrong"] == 0);
  CHECK(has_note(json, "time-share"));
  CHECK(m["hardware_threads"] == threads);
  CHECK(m["oversubscribed"] == true);
  REQUIRE(!m["caveats"].empty());
  const std::string expected =
      "oversubscribed: " + std::to_string(ranks) + " ranks share " + std::to_string(threads) + " hardware threads";
  CHECK(m["caveats"][0].get<std::string>().rfind(expected, 0) == 0);
  // Within the hardware threads there is nothing to say about sharing.
  const auto fits = run_allreduce({"n=1", "bytes=4KiB", "sizes=1KiB", "repeats=1"});
  REQUIRE(fits.code == 0);
  const auto fits_json = nlohmann::json::parse(fits.out);
  CHECK(fits_json["measured"]["oversubscribed"] == false);
  for (const auto& c : fits_json["measured"]["caveats"])
    CHECK(c.get<std::string>().find("oversubscribed") == std::string::npos);
}

TEST_CASE("allreduce run prints an nccl-tests style table") {
  const auto r = run_allreduce({"n=2", "bytes=4KiB", "sizes=1KiB,2KiB", "repeats=1"}, false);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("#wrong") != std::string::npos);
  CHECK(r.out.find("algbw") != std::string::npos);
  CHECK(r.out.find("        1024          256  float    sum") != std::string::npos);
  CHECK(r.out.find("% of the copy ceiling") != std::string::npos);
  CHECK(r.out.find("ceiling: the copy ceiling measured at each size in this run") != std::string::npos);
}

TEST_CASE("allreduce lesson: seven steps, and the theory card names its outside sources and erratum E5") {
  const Lesson& lesson = find_lesson("allreduce");
  CHECK(lesson.step_count() == 7);
  CHECK(lesson.text().theory.find("[EXT]") != std::string::npos);
  CHECK(lesson.text().theory.find("All-to-all is a different collective") != std::string::npos);
  const ParamValues p = ParamValues::parse(lesson.params(), {"n=8", "bytes=64MiB"});
  const auto values = lesson.theory(p);
  const auto* t = values_as<allreduce::AllreduceTheory>(values);
  REQUIRE(t != nullptr);
  CHECK(t->steps == 14);
  CHECK(t->bytes_sent_per_rank == 2.0 * 7 / 8 * 64 * 1048576);
  CHECK(t->busbw_factor == 1.75);
}

TEST_CASE("allreduce: the crossbar algorithms are refused where they cannot run") {
  const auto check = testing::refusal_check("allreduce");
  check({"algo=tree"}, "one of: ring, naive, library, recursive_doubling, rabenseifner, direct");
  check({"algo=recursive_doubling", "n=9"},
        "parameter 'n': value '9' is not allowed with algo 'recursive_doubling' (a link between every pair of ranks); "
        "allowed: an integer from 1 to 8");
  check({"algo=direct", "op=reduce_scatter"},
        "parameter 'op': value 'reduce_scatter' is not allowed with algo 'direct'; allowed: allreduce");
  // On the CUDA backend the lesson runs the ring or NCCL only (checked in validate, with or without a GPU here).
  const Lesson& lesson = find_lesson("allreduce");
  for (const char* algo : {"recursive_doubling", "rabenseifner", "direct"}) {
    const ParamValues p = ParamValues::parse(lesson.params(), {std::string("algo=") + algo});
    try {
      lesson.validate(p, BackendKind::Cuda);
      FAIL("validate accepted algo ", algo, " on cuda");
    } catch (const BadInput& e) {
      CHECK(std::string(e.what()).find(std::string("value '") + algo + "' runs on the CPU backend only") !=
            std::string::npos);
    }
  }
}

TEST_CASE("allreduce run: every algorithm at the sweep's sizes, checked, with its closed forms and its own fit") {
  // N = 3 is not a power of two: recursive doubling and rabenseifner fold rank 0 into rank 1.
  const auto r = run_allreduce({"n=3", "algo=rabenseifner", "bytes=4004", "sizes=4,12,48KiB", "repeats=1"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto json = nlohmann::json::parse(r.out);
  const auto& m = json["measured"];
  CHECK(m["wrong"] == 0);
  CHECK(m["sweep_wrong"] == 0);
  CHECK(json["theory"]["steps"] == 4);  // 2 log2 2 + 2 for the fold-in
  const auto& c = m["comparison"];
  REQUIRE(c.is_object());
  const std::vector<std::string> algos{"ring", "recursive_doubling", "rabenseifner", "direct", "naive"};
  REQUIRE(c["algorithms"].size() == algos.size());
  const double s = 48 * 1024;  // the largest swept size; 12288 floats, divisible by 3 and by 2
  // steps, messages and bytes of the busiest rank at N = 3 from the closed forms, and as the links counted them.
  const struct {
    int steps, messages;
    double bytes;
  } expected[] = {{4, 4, 4.0 / 3 * s}, {3, 2, 2 * s}, {4, 3, 2 * s}, {4, 4, 4.0 / 3 * s}, {4, 2, 2 * s}};
  for (std::size_t i = 0; i < algos.size(); ++i) {
    const auto& a = c["algorithms"][i];
    INFO(algos[i]);
    CHECK(a["algo"] == algos[i]);
    CHECK(a["steps"] == expected[i].steps);
    CHECK(a["messages_sent"] == expected[i].messages);
    CHECK(a["bytes_sent_per_rank"].get<double>() == doctest::Approx(expected[i].bytes));
    CHECK(a["bytes_sent_counted"].get<double>() == doctest::Approx(expected[i].bytes));
    CHECK(a["wrong"] == 0);
    REQUIRE(a["sweep"].size() == 3);
    for (const auto& row : a["sweep"]) CHECK(row["wrong"] == 0);
  }
  CHECK(c.contains("crossover_predicted_bytes"));
  CHECK(c.contains("crossover_measured_bytes"));
  CHECK(c["crossover_sentence"].get<std::string>().rfind("Ring overtakes recursive doubling: ", 0) == 0);
  // Without a link per pair (N > 8) or for another op, there is no comparison, and the run says why.
  const auto big = run_allreduce({"n=9", "bytes=4KiB", "sizes=1KiB", "repeats=1"});
  REQUIRE(big.code == 0);
  const auto big_json = nlohmann::json::parse(big.out);
  CHECK(big_json["measured"]["comparison"].is_null());
  CHECK(big_json["measured"]["comparison_skipped"] ==
        "The comparison of algorithms runs for N up to 8 (a link between every pair of ranks).");
}
