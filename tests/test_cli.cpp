#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "app/cli/shot_command.h"
#include "lessons/registry.h"
#include "tests/support/cli_capture.h"

using namespace dlsys;

namespace {
const auto cli = testing::run_cli_captured;
}  // namespace

TEST_CASE("list names every lesson") {
  const auto r = cli({"list"});
  CHECK(r.code == 0);
  CHECK(r.out.find("matmul") != std::string::npos);
  for (const Lesson* lesson : all_lessons()) {
    const std::string out = "\n" + r.out;  // every line starts after a newline
    const std::size_t line = out.find("\n" + lesson->id() + " ");
    REQUIRE(line != std::string::npos);
    const std::string text = out.substr(line + 1, out.find('\n', line + 1) - line - 1);
    CHECK((text.find(", CPU only)") != std::string::npos) == !lesson->runs_on_cuda());
  }
}

TEST_CASE("bad input exits 2 with a message naming the parameter, the value and what is allowed") {
  auto check = [](std::vector<std::string> args, const std::string& expected) {
    testing::check_refused(cli(args), expected);
  };
  check({"run", "nosuch"}, "unknown lesson 'nosuch'; known lessons: matmul");
  check({"run", "matmul", "--set", "q=1"}, "unknown parameter 'q'");
  check({"run", "matmul", "--set", "m=0"},
        "parameter 'm': value '0' is not allowed (out of range); allowed: an integer from 1 to 8192");
  check({"run", "matmul", "--set", "m=9000"}, "out of range");
  check({"run", "matmul", "--set", "n=ten"}, "parameter 'n': value 'ten' is not allowed (not a number)");
  check({"run", "matmul", "--set", "impl=fastest"}, "one of: all, naive, tiled, blas");
  check({"run", "matmul", "--set", "sizes=0..64"}, "parameter 'sizes'");
  check({"run", "matmul", "--backend", "tpu"}, "backend 'tpu' is unknown; allowed: auto, cpu, cuda");
  check({"run"}, "lesson is required");
  check({"frobnicate"}, "frobnicate");
  check({"export", "matmul", "--svg", "x.svg"}, "has no timeline");
  // A bound on silent MPI peers where there are none is refused, not ignored.
  check({"run", "matmul", "--quick", "--peer-silence-s", "abc"},
        "--peer-silence-s: value 'abc' is not allowed (not a number: ");
  check({"run", "matmul", "--quick", "--peer-silence-s", "5"},
        "--peer-silence-s is not allowed here: it bounds the silence of ranks as processes");
}

TEST_CASE("run prints theory and measured values and writes JSON to stdout") {
  const auto r = cli({"run", "matmul", "--set", "m=33", "--set", "n=17", "--set", "k=9", "--set", "sizes=16,32",
                      "--set", "repeats=1", "--json", "-"});
  REQUIRE(r.code == 0);
  const auto json = nlohmann::json::parse(r.out);
  CHECK(json["lesson"] == "matmul");
  CHECK(json["theory"]["mults"] == 33.0 * 17 * 9);
  CHECK(json["theory"]["adds"] == 33.0 * 17 * 8);
  CHECK(json["measured"]["wrong"] == 0);
  CHECK(json["measured"]["naive_gflops"].get<double>() > 0);
  // Time for three variants, the n^3 theory line, the same sweep as GFLOP/s, then the chosen shape's roofline (the
  // roof, one point per variant): found by id, not by legend.
  std::vector<std::string> ids;
  for (const auto& series : json["series"]) ids.push_back(series["id"]);
  CHECK(ids == std::vector<std::string>{"naive_time", "tiled_time", "blas_time", "cubic_theory", "naive_gflops",
                                        "tiled_gflops", "blas_gflops", "roof_fp32", "naive_roof", "tiled_roof",
                                        "blas_roof"});
  // 2 n^3 / time at n = 32, from the time series' own point.
  const auto& time = json["series"][0]["points"][1];
  CHECK(json["series"][4]["points"][1][1].get<double>() ==
        doctest::Approx(2.0 * 32 * 32 * 32 / (time[1].get<double>() * 1e3)));
}

TEST_CASE("shot --every-step names each step's file before its extension") {
  CHECK(every_step_path("out/view.png", 3) == "out/view-step3.png");
  CHECK(every_step_path("out.d/view", 1) == "out.d/view-step1");
  CHECK(every_step_path("rects.json", 12) == "rects-step12.json");
  CHECK(every_step_path("dir/.hidden", 2) == "dir/.hidden-step2");
}
