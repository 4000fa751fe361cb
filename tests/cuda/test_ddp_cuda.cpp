// DDP on the GPU: weights after a few steps against single-rank training on the CPU for N = 1..4, several bucket
// sizes and gradient accumulation at awkward sizes, every replica equal, the bytes against the closed form, the
// times consistent, and the lesson run whole on --backend cuda.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "engine/ledger.h"
#include "kernels/ddp/buckets.h"
#include "kernels/ddp/ddp_cuda.h"
#include "kernels/ddp/trainer.h"
#include "tests/support/cli_capture.h"

using namespace dlsys;

TEST_CASE("ddp on the GPU: weights equal single-rank training to rounding for N = 1..4 and any bucket") {
  ddp::TrainConfig c;
  c.shape = {3, 40};  // a width no GEMM tile divides
  c.global_batch = 24;
  c.steps = 3;
  const std::int64_t params = training::parameter_count(c.shape);
  const training::DataSet data = training::make_data_set(c.shape, c.global_batch * c.steps, 11);
  const std::vector<float> single = ddp::train_single_rank(c, data);
  for (int n : {1, 2, 3, 4})
    for (std::int64_t bucket : {std::int64_t(62), std::int64_t(998), params / 3 / 2 * 2, params})
      for (int accumulate : {1, 2}) {
        ddp::TrainConfig g = c;
        g.ranks = n;
        g.bucket_elements = bucket;
        g.accumulate = accumulate;
        if (g.global_batch % (n * accumulate) != 0) continue;
        INFO("n = ", n, ", bucket = ", bucket, ", accumulate = ", accumulate);
        MemoryLedger ledger;
        const ddp::cuda::GpuTrainResult r = ddp::cuda::train_gpu(g, data, ledger);
        CHECK(r.placement.ranks == n);
        CHECK(ddp::max_rel_err(r.result.weights, single) <= 1e-5);
        CHECK(r.result.replicas_identical);
        std::int64_t closed_form = 0;
        for (const ddp::Bucket& b : r.result.buckets) closed_form += ddp::ring_bytes_sent(b.elements(), n, 0, 4);
        CHECK(r.result.rank0_bytes_sent_per_step == closed_form);
        for (const auto& step : r.result.steps)
          for (const ddp::RankStep& t : step) {
            CHECK(t.step_us > 0);
            CHECK(t.compute_us > 0);
            CHECK(t.hidden_comm_us <= t.comm_us + 1e-6);
            CHECK(t.exposed_comm_us >= 0);
          }
        CHECK(ledger.current_bytes("weights rank 0") == 0);  // released at the end
        CHECK(ledger.peak_bytes("weights rank 0") == params * 4);
      }
}

TEST_CASE("ddp runs whole on --backend cuda, its weights matching single-rank training") {
  for (const char* n : {"n=2", "n=3"}) {
    const auto r = testing::run_cli_captured(
        {"run", "ddp", "--backend", "cuda", "--quick", "--set", n, "--set", "batch=48", "--json", "-"});
    INFO(n, ": ", r.err);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["backend"]["kind"] == "cuda");
    CHECK(j["backend"]["timer"] == "cuda_event");
    const auto& m = j["measured"];
    CHECK(m["on_gpu"] == true);
    CHECK_FALSE(m["placement"].get<std::string>().empty());
    CHECK(m["max_rel_err_vs_single"].get<double>() <= 1e-4);
    CHECK(m["replicas_identical"] == true);
    CHECK(m["comm_bytes_match_theory"] == true);
    CHECK(m["overlap_fraction"].get<double>() >= 0);
    CHECK(m["overlap_fraction"].get<double>() <= 1);
  }
}

TEST_CASE("ddp on --backend cuda: DataParallel and 16-bit wires are refused with the parameter named") {
  const auto dp = testing::run_cli_captured({"run", "ddp", "--backend", "cuda", "--set", "mode=dataparallel"});
  CHECK(dp.code == 2);
  CHECK(dp.err.find("parameter 'mode'") != std::string::npos);
  const auto wire = testing::run_cli_captured({"run", "ddp", "--backend", "cuda", "--set", "grad_dtype=fp16"});
  CHECK(wire.code == 2);
  CHECK(wire.err.find("parameter 'grad_dtype'") != std::string::npos);
}
