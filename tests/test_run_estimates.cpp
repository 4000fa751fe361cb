// Each lesson's estimate of its CPU run, pinned to its formula with exact numbers, and the CLI refusing a run the
// estimate puts over max_minutes (exit 2, the estimate in the message) while accepting one it puts under.
#include <doctest/doctest.h>

#include "engine/backend.h"
#include "engine/params.h"
#include "lessons/ddp/ddp_lesson.h"
#include "lessons/kvcache/kvcache_lesson.h"
#include "lessons/kvcache/live_decode.h"
#include "lessons/precision/precision_lesson.h"
#include "lessons/precision/precision_problem.h"
#include "lessons/registry.h"
#include "lessons/tensor/tensor_lesson.h"
#include "lessons/zero/zero_lesson.h"
#include "tests/support/cli_capture.h"

using namespace dlsys;

namespace {

ParamValues params_of(const std::string& lesson, const std::vector<std::string>& sets) {
  return ParamValues::parse(find_lesson(lesson).params(), sets);
}

}  // namespace

TEST_CASE("precision's estimate: 0.35 s, then each training step's FLOP at 16 GFLOP/s") {
  const double step_flop = 6.0 * 256 * (16 * 64 + 64 * 64 + 64 * 16);  // batch 256 through 16-64-64-16
  CHECK(precision::precision_step_flops() == step_flop);
  // fp16: fp32, fp16 without and with scaling, bf16.
  CHECK(precision_cpu_run_seconds(PrecisionLesson().read_params(params_of("precision", {"steps=1000"}))) ==
        doctest::Approx(0.35 + 4 * 1000 * step_flop / 16e9).epsilon(1e-12));
  // bf16 with scaling is none of the four: a fifth training.
  CHECK(precision_cpu_run_seconds(
            PrecisionLesson().read_params(params_of("precision", {"steps=200", "format=bf16", "scaling=on"}))) ==
        doctest::Approx(0.35 + 5 * 200 * step_flop / 16e9).epsilon(1e-12));
}

TEST_CASE("kvcache's estimate: every step's FLOP at 24 GFLOP/s and 11 ns per attention score") {
  // d_model 64, one layer, one head, vocab 256. With the cache, position p costs 8 d^2 + 4 (p + 1) d + 2 d V FLOP
  // and p + 1 scores; recomputing, (p + 1) 8 d^2 + 2 (p + 1)(p + 2) d + 2 d V FLOP and (p + 1)(p + 2) / 2 scores.
  const decoder::Shape shape{.d_model = 64, .layers = 1, .heads = 1, .kv_heads = 1, .vocab = 256};
  const auto step = [](double flop, double scores) { return flop / 24e9 + scores * 11e-9; };
  const double position0 = step(32768 + 256 + 32768, 1) + step(32768 + 256 + 32768, 1);
  const double position1 = step(32768 + 512 + 32768, 2) + step(65536 + 768 + 32768, 3);
  // Two tokens: the warm-up and one repeat each generate both; the last step is timed 15 + 1 times on each path.
  CHECK(kvcache::live_run_seconds(shape, 2, 1) ==
        doctest::Approx(2 * (position0 + position1) + 16 * position1).epsilon(1e-12));
  // Three repeats: the warm-up once, the generation three times, the last step still 16 times.
  CHECK(kvcache::live_run_seconds(shape, 2, 3) ==
        doctest::Approx(4 * (position0 + position1) + 16 * position1).epsilon(1e-12));
  CHECK(kvcache::live_run_seconds({}, 128, 3) == doctest::Approx(2.82348608).epsilon(1e-9));  // the defaults
}

TEST_CASE("zero's estimate: 6 ns per parameter of every rank per step and set-up, rows' FLOP at 64 GFLOP/s") {
  // Defaults: 8 layers of width 256 (P = 1,048,576), N = 4, 3 steps, 8 rows; the sweep N = 1, 2, 4, 8, 16.
  // Passes: 4 stages x (3 + 1) x 4 P + 4 stages x (1 + 1) x 31 P = 312 P; FLOP: 6 P x 8 rows x (4 x 4 x 3 + 4 x 31).
  const double p = 1048576;
  CHECK(zero_cpu_run_seconds(ZeroLesson().read_params(params_of("zero", {}))) ==
        doctest::Approx(312 * p * 6e-9 + 6 * p * 8 * 172 / 64e9).epsilon(1e-12));
  CHECK(zero_cpu_run_seconds(ZeroLesson().read_params(params_of("zero", {}))) ==
        doctest::Approx(2.098200576).epsilon(1e-9));
}

TEST_CASE("tensor's estimate: the linears at 64 GFLOP/s and attention at 24, each step and the reference") {
  // One configuration (t = 1, one head, no other hidden): the reference step and repeats + 1 = 2 steps.
  const double linears = 72.0 * 32 * 64 * 64, attention = 12.0 * 32 * 32 * 64;
  const TensorLesson tensor;
  CHECK(tensor_cpu_run_seconds(tensor.read_params(
            params_of("tensor", {"t=1", "heads=1", "hidden=64", "seq=32", "hidden_sweep=64", "repeats=1"}))) ==
        doctest::Approx(3 * (linears / 64e9 + attention / 24e9)).epsilon(1e-12));
  CHECK(tensor_cpu_run_seconds(tensor.read_params(params_of("tensor", {}))) ==
        doctest::Approx(1.51519232).epsilon(1e-9));
}

TEST_CASE("ddp's estimate: every configuration's FLOP at 90 GFLOP/s and 3.5 ns per parameter of every rank") {
  const ddp::DdpParams p = ddp::read_ddp_params(params_of("ddp", {"layers=2", "width=64", "batch=8"}));
  double flop = 0, passes = 0;
  std::vector<ddp::TrainConfig> trained{ddp_config(p)};
  for (const PlannedRun& r : ddp_run_plan(p)) trained.push_back(r.config);
  flop += trained.front().steps * 12.0 * 8 * 64 * 64 * 2;  // the single-rank reference
  for (const ddp::TrainConfig& c : trained) {
    flop += c.steps * 12.0 * c.global_batch * 64 * 64 * 2;
    passes += (c.steps + 1.0) * c.ranks * (2 * 2 * 64 * 64);
  }
  CHECK(ddp_cpu_run_seconds(p) == doctest::Approx(flop / 90e9 + passes * 3.5e-9).epsilon(1e-12));
  CHECK(ddp_cpu_run_seconds(p) == doctest::Approx(0.0109598037333).epsilon(1e-9));
  CHECK(ddp_cpu_run_seconds(ddp::read_ddp_params(params_of("ddp", {}))) == doctest::Approx(4.3855642624).epsilon(1e-9));
}

TEST_CASE("runs estimated over max_minutes are refused with the estimate; runs under it are not") {
  // Each ran for minutes on a 2-core machine while its earlier estimate let it through max_minutes = 0.5.
  const std::vector<std::pair<std::string, std::vector<std::string>>> long_runs{
      {"kvcache", {"d_model=64", "tokens=1024", "repeats=1"}},
      {"ddp", {"width=2048", "batch=16"}},
      {"zero", {"width=1024", "rows=32"}},
      {"tensor", {"hidden=2048", "seq=512"}},
      {"precision", {"steps=100000"}},
  };
  for (const auto& run : long_runs) {
    const std::string& lesson = run.first;  // not a structured binding: under clang CAPTURE cannot capture one
    const std::vector<std::string>& sets = run.second;
    CAPTURE(lesson);
    std::vector<std::string> with_limit = sets;
    with_limit.push_back("max_minutes=0.5");
    const testing::CliOutcome r = testing::run_lesson_captured(lesson, with_limit);
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("this run would take about") != std::string::npos);
    CHECK(r.err.find("more than max_minutes = 0.5") != std::string::npos);
  }
  // precision at 2000 steps trains in about 5 s: the earlier estimate (2.5 minutes) refused it under 0.1.
  const Lesson& precision = find_lesson("precision");
  CHECK_NOTHROW(precision.validate(params_of("precision", {"steps=2000", "max_minutes=0.1"}), BackendKind::Cpu));
}
