// The zero lesson end to end: bad input refused with the parameter named, the calculator's JSON, and a real run's
// JSON keys, with the ledger equal to the formulas at every stage.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/backend.h"
#include "engine/errors.h"
#include "engine/params.h"
#include "kernels/collectives/gpu_ring_plan.h"
#include "kernels/zero/zero_cuda.h"
#include "kernels/zero/zero_memory.h"
#include "lessons/registry.h"
#include "lessons/zero/zero_lesson.h"
#include "tests/support/cli_capture.h"

using namespace dlsys;

namespace {

testing::CliOutcome run_zero(const std::vector<std::string>& sets) {
  return testing::run_lesson_captured("zero", sets, true);
}

std::vector<std::string> small(std::vector<std::string> more = {}) {
  return testing::with_sets({"layers=2", "width=32", "rows=2", "steps=2"}, more);
}

}  // namespace

TEST_CASE("zero: bad input exits 2 naming the parameter, the value and what is allowed") {
  const auto check = testing::refusal_check("zero");
  check({"n=0"}, "parameter 'n': value '0' is not allowed (out of range); allowed: an integer from 1 to");
  check({"stage=4"}, "parameter 'stage': value '4' is not allowed (out of range); allowed: an integer from 0 to 3");
  check({"stage=-1"}, "parameter 'stage'");
  check({"mode=theory", "params=0"}, "parameter 'params': value '0' is not allowed");
  check({"mode=theory", "params=-5"}, "parameter 'params'");
  check({"mode=theory", "model=gpt-5"}, "parameter 'model': value 'gpt-5' is not allowed");
  check(small({"n=3"}), "parameter 'n': value '3' does not divide a layer's 2 w^2 = 2048 weights");
  check(small({"n=128"}), "allowed: 1 to 64");
  check({"layers=256", "width=4096", "n=1"}, "of host memory is available");
  check({"mode=theory", "config=/nonexistent/config.json"}, "config");
  const std::string bad = "/tmp/dlsys_zero_bad_config.json";
  std::ofstream(bad) << "{\"num_hidden_layers\": 2,";
  check({"mode=theory", "config=" + bad}, "not valid JSON");
}

TEST_CASE("zero: the calculator's JSON at the paper's example") {
  const auto r = run_zero({"mode=theory", "params=7.5e9", "n=64", "stage=1"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto& t = j["theory"];
  CHECK(t["model_state_bytes_per_rank"].get<double>() == 31.40625e9);
  CHECK(t["comm_elements_per_step"].get<double>() == 15e9);
  CHECK(t["fits"].get<bool>());
  CHECK(t["min_ranks_to_fit"].get<std::int64_t>() == 2);
  CHECK(t["min_stage_to_fit"].get<int>() == 1);
  CHECK(t["model_state_bytes_by_stage"][3].get<double>() == 1.875e9);
  CHECK(j["measured"].empty());
  const auto preset = run_zero({"mode=theory", "model=llama-2-7b", "n=8", "stage=3", "checkpointing=on"});
  REQUIRE(preset.code == 0);
  const auto p = nlohmann::json::parse(preset.out)["theory"];
  CHECK(p["parameters"].get<double>() == 6738415616.0);
  CHECK(p["activations_known"].get<bool>());
  CHECK(p["activation_bytes_per_rank"].get<double>() > 0);
}

TEST_CASE("zero: a run's JSON keys, the ledger equal to the formulas, weights equal to stage 0's") {
  const auto r = run_zero(small({"n=2", "stage=2"}));
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"model_state_bytes_per_rank", "comm_elements_per_step", "fits", "min_ranks_to_fit"})
    CHECK(j["theory"].contains(key));
  const auto& m = j["measured"];
  for (const char* key : {"peak_bytes_per_rank", "comm_bytes", "max_rel_err_vs_stage0"}) CHECK(m.contains(key));
  for (const char* tag : {"weights", "gradients", "optimizer", "activations", "comm"})
    CHECK(m["peak_bytes_per_rank"].contains(tag));
  CHECK(m["all_stages_match_formula"].get<bool>());
  CHECK(m["all_stages_bit_identical"].get<bool>());
  CHECK(m["sweep_matches_formula"].get<bool>());
  CHECK(m["swept_ranks"] == nlohmann::json::array({1, 2, 4, 8, 16}));
  CHECK(m["max_rel_err_vs_stage0"].get<double>() == 0);
  // Psi = 2 x 2 x 32^2 = 4096; stage 2 on 2 ranks: 2 Psi + 14 Psi / 2.
  CHECK(m["peak_bytes_per_rank"]["model_states"].get<std::int64_t>() == 2 * 4096 + 14 * 4096 / 2);
  CHECK(m["peak_bytes_per_rank"]["model_states"].get<double>() ==
        j["theory"]["model_state_bytes_per_rank"].get<double>());
  // Two collectives of Psi a step, each sending half of it per rank, 4 bytes an element.
  CHECK(m["comm_bytes"].get<std::int64_t>() == 2 * 4096 / 2 * 4);
  CHECK(m["stages"].size() == 4);
  CHECK(j["timeline"].size() == 4);
}

TEST_CASE("zero: each stage's step makes the collectives the stage calls for, in theory and in the measured run") {
  // Per rank and step, with L layers: stage 0 L all-reduces; stages 1-2 L reduce-scatters and L all-gathers; stage 3
  // 2L all-gathers (before each forward and each backward) and L reduce-scatters; L forwards, L backwards, one Adam.
  const int layers = 2;
  auto expected = [&](int stage, const std::string& kind) {
    if (kind == "F" || kind == "B") return layers;
    if (kind == "optimizer") return 1;
    if (kind == "all_reduce") return stage == 0 ? layers : 0;
    if (kind == "reduce_scatter") return stage == 0 ? 0 : layers;
    if (kind == "all_gather") return stage == 0 ? 0 : stage == 3 ? 2 * layers : layers;
    return -1;
  };
  const char* kinds[] = {"F", "B", "optimizer", "all_reduce", "reduce_scatter", "all_gather"};
  const auto r = run_zero(small({"n=2"}));
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["timeline"].size() == 4);
  const ZeroLesson zero;
  const std::vector<Timeline> theory =
      zero_op_order(zero.read_params(ParamValues::parse(zero.params(), small({"n=2"}))));
  REQUIRE(theory.size() == 4);
  for (int stage = 0; stage < 4; ++stage)
    for (int lane = 0; lane < 2; ++lane)
      for (const char* kind : kinds) {
        CAPTURE(stage);
        CAPTURE(lane);
        CAPTURE(kind);
        int measured = 0, simulated = 0;
        for (const auto& span : j["timeline"][stage]["spans"]) measured += span["lane"] == lane && span["kind"] == kind;
        for (const TimelineSpan& span : theory[std::size_t(stage)].spans)
          simulated += span.lane == lane && span.kind == kind;
        CHECK(measured == expected(stage, kind));
        CHECK(simulated == expected(stage, kind));
      }
}

TEST_CASE("zero on the CUDA backend: it runs there; without a GPU, no memory to run in; the calculator anywhere") {
  const Lesson& lesson = find_lesson("zero");
  CHECK(lesson.runs_on_cuda());
  const ParamValues run = ParamValues::parse(lesson.params(), small());
  if (!cuda_status().available)
    CHECK_THROWS_WITH_AS(lesson.validate(run, BackendKind::Cuda), doctest::Contains("on the GPU the run needs"),
                         BadInput);
  const ParamValues theory = ParamValues::parse(lesson.params(), {"mode=theory", "params=7.5e9", "n=64"});
  CHECK_NOTHROW(lesson.validate(theory, BackendKind::Cuda));
}

TEST_CASE("zero GPU plan: a rank's device bytes are the CPU ledger's tags plus its rows, landing chunk and loss") {
  zero::ZeroConfig c;
  c.shape = {2, 32};
  c.ranks = 4;
  c.rows_per_rank = 2;
  const std::int64_t psi = 2 * 2 * 32 * 32, layer = 2 * 32 * 32, rows = 2 * 32;
  const std::int64_t fixed = 4 * (5 * rows + 3 * rows) + 4 * layer + 4 * 2 * rows + 8 + 4 * (layer / 4);
  for (int stage = 0; stage <= 3; ++stage) {
    c.stage = stage;
    const std::int64_t states = zero::exact_model_state_bytes(stage, psi, 4).total();
    const std::int64_t workspace = 4 * layer * (stage >= 3 ? 1 : 2);
    CHECK(zero::cuda::gpu_rank_bytes(c) == states + workspace + fixed);
  }
  const collectives::GpuPlacement emulated = collectives::plan_gpu_placement(4, 1, true);
  CHECK(zero::cuda::gpu0_bytes_needed(c, emulated) ==
        4 * (zero::cuda::gpu_rank_bytes(c) + zero::cuda::kGpuRankMarginBytes));
}

TEST_CASE("zero: the theory card's reduction factors are the closed forms', rounded to one decimal") {
  using zero::reduction_factor;
  const std::string expected =
      fmt::format("{:.1f}x and {:.1f}x at N = 8, {:.1f}x and {:.1f}x at N = 64", reduction_factor(1, 8),
                  reduction_factor(2, 8), reduction_factor(1, 64), reduction_factor(2, 64));
  CHECK(expected == "2.9x and 4.3x at N = 8, 3.8x and 7.2x at N = 64");
  CHECK(find_lesson("zero").text().theory.find(expected) != std::string::npos);
}
