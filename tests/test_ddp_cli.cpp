// The data-parallel lesson end to end: bad input refused with the parameter named, a small real run's JSON keys, its
// bytes equal to the closed forms, every variant's weights against single-rank training, and the step data.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "engine/backend.h"
#include "engine/errors.h"
#include "engine/params.h"
#include "kernels/collectives/gpu_ring_plan.h"
#include "kernels/ddp/buckets.h"
#include "kernels/ddp/ddp_cuda.h"
#include "lessons/ddp/ddp_lesson.h"
#include "lessons/ddp/ddp_steps.h"
#include "lessons/registry.h"
#include "tests/support/cli_capture.h"

using namespace dlsys;

namespace {

testing::CliOutcome run_ddp(const std::vector<std::string>& sets, bool json = true) {
  return testing::run_lesson_captured("ddp", sets, json);
}

// A model small enough to train in a blink: 2 layers of width 32 (4096 weights, 16 KiB of gradient).
std::vector<std::string> small(std::vector<std::string> more = {}) {
  return testing::with_sets({"layers=2", "width=32", "batch=16", "bucket=4KiB", "steps=1"}, more);
}

}  // namespace

TEST_CASE("ddp: bad input exits 2 naming the parameter, the value and what is allowed") {
  const auto check = testing::refusal_check("ddp");
  check({"n=0"}, "parameter 'n': value '0' is not allowed (out of range); allowed: an integer from 1 to 64");
  check({"bucket=0"}, "parameter 'bucket': value '0' is not allowed");
  check({"bucket=0B"}, "parameter 'bucket'");
  check({"accumulate=0"},
        "parameter 'accumulate': value '0' is not allowed (out of range); allowed: an integer from 1");
  check({"grad_dtype=int8"}, "one of: fp32, bf16, fp16");
  check({"mode=ps"}, "one of: ddp, dataparallel");
  check({"n=3", "batch=64"}, "parameter 'n': value '3' is not allowed with batch = 64 and accumulate = 1");
  check({"n=2", "batch=8", "accumulate=8"}, "allowed: n dividing batch / accumulate: 1");
  check({"bucket=8B"}, "parameter 'bucket': value '8 B (8 B)' is not allowed for a gradient of");
  // Sizes that cannot fit are refused before anything is allocated.
  check({"layers=512", "width=16384", "n=64", "batch=64", "bucket=1GiB"},
        "of host memory is available; lower layers, width");
  check({"layers=16", "width=2048", "batch=4096", "max_minutes=0.1"}, "more than max_minutes = 0.1");
}

TEST_CASE("ddp on the CUDA backend: DDP with fp32 gradients only; without a GPU, no memory to run in") {
  const Lesson& lesson = find_lesson("ddp");
  CHECK(lesson.runs_on_cuda());
  const ParamValues dp = ParamValues::parse(lesson.params(), {"mode=dataparallel"});
  CHECK_THROWS_WITH_AS(lesson.validate(dp, BackendKind::Cuda),
                       doctest::Contains("parameter 'mode': value 'dataparallel' is not allowed with --backend cuda"),
                       BadInput);
  const ParamValues bf16 = ParamValues::parse(lesson.params(), {"grad_dtype=bf16"});
  CHECK_THROWS_WITH_AS(lesson.validate(bf16, BackendKind::Cuda),
                       doctest::Contains("parameter 'grad_dtype': value 'bf16' is not allowed with --backend cuda"),
                       BadInput);
  const ParamValues p = ParamValues::parse(lesson.params(), lesson.quick_params());
  if (!cuda_status().available)
    CHECK_THROWS_WITH_AS(lesson.check_run_resources(p, BackendKind::Cuda),
                         doctest::Contains("on the GPU the run needs"), BadInput);
  // The GPU run plan trains neither DataParallel nor 16-bit wires.
  for (const PlannedRun& r : ddp_run_plan(ddp::read_ddp_params(p), BackendKind::Cuda)) {
    CHECK(r.config.mode == ddp::SyncMode::Ddp);
    CHECK(r.config.wire == ddp::WireFormat::Fp32);
  }
}

TEST_CASE("ddp with launcher=mpi outside mpirun: refused (exit 2) saying how to start it; the threads stay default") {
  const Lesson& lesson = find_lesson("ddp");
  // The GUI's path: no MPI world in this process.
  const ParamValues mpi = ParamValues::parse(lesson.params(), {"launcher=mpi"});
  CHECK_THROWS_WITH_AS(lesson.validate(mpi, BackendKind::Cpu), doctest::Contains("parameter 'launcher': value 'mpi'"),
                       BadInput);
  // The command line's path: no launcher's environment (or no MPI in the build).
  testing::check_refused(run_ddp({"launcher=mpi", "layers=1", "width=8", "batch=2", "steps=1"}),
                         "parameter 'launcher': value 'mpi'");
  // The default is rank threads, and their run plan is unchanged by the parameter.
  const ParamValues threads = ParamValues::parse(lesson.params(), lesson.quick_params());
  CHECK(threads.text("launcher") == "threads");
  CHECK(!ddp_run_plan(ddp::read_ddp_params(threads)).empty());
  CHECK(ddp_run_plan(ddp::read_ddp_params(ParamValues::parse(lesson.params(), {"launcher=mpi"}))).empty());
}

TEST_CASE("ddp GPU plan: device bytes per rank, and the ring's position-0 rank sends the closed form's bytes") {
  ddp::TrainConfig c;
  c.shape = {3, 24};
  c.ranks = 3;
  c.global_batch = 12;
  c.accumulate = 2;
  c.steps = 2;
  c.bucket_elements = 1000;
  const std::int64_t params = 3 * 2 * 24 * 24, rows = 2, share = 4;
  const std::int64_t landing = 334;  // chunk 0 of a 1000-element bucket over 3 ranks
  CHECK(collectives::gpu_ring_landing_elements(3, 1000) == landing);
  CHECK(collectives::gpu_ring_landing_elements(1, 1000) == 1);
  CHECK(ddp::cuda::gpu_rank_bytes(c) ==
        4 * (2 * params + 7 * rows * 24 + 3 * rows * 24 + 2 * 2 * share * 24 + landing));
  collectives::GpuPlacement emulated = collectives::plan_gpu_placement(3, 1, true);
  CHECK(emulated.emulated);
  CHECK(ddp::cuda::gpu0_bytes_needed(c, emulated) ==
        3 * (ddp::cuda::gpu_rank_bytes(c) + ddp::cuda::kGpuRankMarginBytes));
  collectives::GpuPlacement spread = collectives::plan_gpu_placement(3, 4, true);
  CHECK(ddp::cuda::gpu0_bytes_needed(c, spread) == ddp::cuda::gpu_rank_bytes(c) + ddp::cuda::kGpuRankMarginBytes);
  for (int n : {2, 3, 4, 5})
    for (std::int64_t count : {2, 7, 1000, 1001, 4097}) {
      const int rank = ddp::cuda::gpu_ring_position0_rank(n);
      CHECK(collectives::gpu_ring_bytes_sent(collectives::Op::AllReduce, n, rank, count) ==
            ddp::ring_bytes_sent(count, n, 0, 4));
    }
  CHECK(ddp::cuda::gpu_ring_position0_rank(1) == 0);
}

TEST_CASE("ddp theory: buckets and ring bytes from the closed forms") {
  const Lesson& lesson = find_lesson("ddp");
  const ParamValues p = ParamValues::parse(lesson.params(), {"layers=8", "width=512", "n=4", "bucket=4MiB"});
  const ddp::DdpTheory theory = ddp_theory(ddp::read_ddp_params(p));
  const ddp::DdpTheory* t = &theory;
  CHECK(t->parameters == 8 * 2 * 512 * 512);
  CHECK(t->gradient_bytes == 16 << 20);
  CHECK(t->buckets == 4);
  CHECK(t->bytes_per_rank_per_step == 2 * 3 * (16 << 20) / 4);  // 2 (N-1)/N x gradient bytes
  CHECK(t->ring_closed_form_bytes == double(t->bytes_per_rank_per_step));
  CHECK(t->pytorch_bucket_cap_bytes == 25 * 1024 * 1024);
  CHECK(t->pytorch_first_bucket_bytes == 1024 * 1024);
  const ParamValues half = ParamValues::parse(lesson.params(), {"layers=8", "width=512", "n=4", "grad_dtype=bf16"});
  CHECK(ddp_theory(ddp::read_ddp_params(half)).bytes_per_rank_per_step == 3 * (16 << 20) / 4);
  const ParamValues dp =
      ParamValues::parse(lesson.params(), {"layers=1", "width=8", "n=2", "batch=4", "mode=dataparallel"});
  // (N-1) (4 P + 2 x 4 w B / N) = 512 + 128.
  CHECK(ddp_theory(ddp::read_ddp_params(dp)).bytes_per_rank_per_step == 640);
}

TEST_CASE("ddp run: the documented keys, bytes equal to theory, every variant close to single-rank training") {
  const auto r = run_ddp(small({"n=2"}));
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto json = nlohmann::json::parse(r.out);
  CHECK(json["backend"]["emulated"] == true);
  const auto& t = json["theory"];
  const auto& m = json["measured"];
  for (const char* key : {"bytes_per_rank_per_step", "buckets"}) CHECK_MESSAGE(t.contains(key), key);
  for (const char* key : {"step_us", "compute_us", "exposed_comm_us", "idle_us", "overlap_fraction", "comm_bytes",
                          "max_rel_err_vs_single", "bench_overlap_fraction", "bench_met"})
    CHECK_MESSAGE(m.contains(key), key);
  CHECK(t["buckets"] == 4);  // 16 KiB of gradient in 4 KiB buckets
  CHECK(m["comm_bytes"] == t["bytes_per_rank_per_step"]);
  CHECK(m["comm_bytes"] == 16384);  // 2 (2-1)/2 x 16 KiB
  CHECK(m["comm_bytes_match_theory"] == true);
  CHECK(m["replicas_identical"] == true);
  CHECK(m["max_rel_err_vs_single"].get<double>() <= 1e-5);
  CHECK(m["overlap_fraction"].get<double>() >= 0);
  CHECK(m["overlap_fraction"].get<double>() <= 1);
  const auto& variants = m["variants"];
  REQUIRE(variants.size() == 5);  // the chosen, bf16, fp16, accumulate 2, dataparallel
  for (const auto& v : variants) {
    INFO(v.dump());
    const double bound = v["grad_dtype"] == "fp32" ? 1e-5 : 3e-2;
    CHECK(v["max_rel_err_vs_single"].get<double>() <= bound);
    const std::int64_t expected = v["mode"] == "dataparallel" ? 16384 + 2 * 8 * 32 * 4
                                  : v["grad_dtype"] == "fp32" ? 16384
                                                              : 8192;
    CHECK(v["comm_bytes"].get<std::int64_t>() == expected);
  }
  for (const char* id : {"step_vs_bucket", "exposed_vs_bucket", "overlap_vs_bucket", "step_vs_n_ddp", "step_vs_n_dp",
                         "rank0_bytes_vs_n_ddp", "rank0_bytes_vs_n_dp"}) {
    bool found = false;
    for (const auto& s : json["series"]) found |= s["id"] == id;
    CHECK_MESSAGE(found, id);
  }
  // The chosen run's measured step, one bucket's and DataParallel's: compute and communication lanes per rank.
  REQUIRE(json["timeline"].size() == 3);
  CHECK(json["timeline"][0]["lanes"].size() == 4);
  const auto text = run_ddp(small({"n=2"}), false);
  REQUIRE(text.code == 0);
  CHECK(text.out.find("Benchmark: N = 2, buckets of a quarter of the gradient") != std::string::npos);
}

TEST_CASE("ddp run in dataparallel mode: the master's bytes, counted, equal the closed form") {
  const auto r = run_ddp(small({"n=4", "mode=dataparallel"}));
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto json = nlohmann::json::parse(r.out);
  // (N-1) (4 P + 2 x 4 w B / N) = 3 x (16384 + 1024).
  CHECK(json["measured"]["comm_bytes"] == 3 * (16384 + 1024));
  CHECK(json["measured"]["comm_bytes_match_theory"] == true);
  CHECK(json["measured"]["overlap_fraction"] == 0);
}

TEST_CASE("ddp step data: the course's batch of 10 over 5 workers averages to the full-batch gradient") {
  const Lesson& lesson = find_lesson("ddp");
  const ParamValues p = ParamValues::defaults(lesson.params());
  const auto data = lesson.step_data(p);
  const auto* steps = dynamic_cast<const ddp::DdpSteps*>(data.get());
  REQUIRE(steps != nullptr);
  CHECK(steps->split.batch == 10);
  CHECK(steps->split.workers == 5);
  CHECK(steps->split.max_abs_diff <= 1e-6 * steps->split.max_abs_grad);
  CHECK(steps->buckets.size() == 4);  // 16 MiB of gradient in 4 MiB buckets
  CHECK(steps->ranks.size() == 7);
}
