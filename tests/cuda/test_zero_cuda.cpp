// ZeRO on the GPU: every stage's ledger against the paper's formulas, the bytes against the ring's, stages 1-3
// bit-identical to GPU stage 0 and GPU stage 0 close to CPU stage 0, for N = 1..4 at small awkward widths, in bf16 and
// fp16, and the lesson run whole on --backend cuda.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "kernels/zero/sharded_training.h"
#include "kernels/zero/zero_cuda.h"
#include "kernels/zero/zero_memory.h"
#include "tests/support/cli_capture.h"

using namespace dlsys;

namespace {

double max_rel_err(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    worst = std::max(worst, std::abs(double(a[i]) - double(b[i])));
    scale = std::max(scale, std::abs(double(b[i])));
  }
  return scale > 0 ? worst / scale : worst;
}

}  // namespace

TEST_CASE("zero on the GPU: ledgers equal the formulas, stages equal GPU stage 0, close to CPU stage 0") {
  for (precision::Format dtype : {precision::Format::Bf16, precision::Format::Fp16})
    for (int n : {1, 2, 3, 4}) {
      zero::ZeroConfig c;
      c.shape = {3, n == 3 ? 18 : 20};  // 2 w^2 divisible by n; widths no GEMM tile divides
      c.ranks = n;
      c.rows_per_rank = 3;
      c.steps = 3;
      c.dtype = dtype;
      const std::int64_t psi = training::parameter_count(c.shape);
      std::vector<float> gpu_stage0;
      for (int stage = 0; stage <= 3; ++stage) {
        c.stage = stage;
        INFO("n = ", n, ", stage = ", stage, ", fp16 = ", dtype == precision::Format::Fp16);
        const zero::cuda::GpuZeroTraining g = zero::cuda::train_sharded_gpu(c);
        REQUIRE(g.training.peaks.size() == std::size_t(n));
        for (const zero::RankPeakBytes& p : g.training.peaks)
          CHECK(p.model_states == zero::exact_model_state_bytes(stage, psi, n).total());
        const std::int64_t ring = zero::collectives_per_step(stage) * psi / n * (n - 1) * 4;
        for (std::int64_t bytes : g.training.comm_bytes_last_step) CHECK(bytes == ring);
        for (double loss : g.training.losses) CHECK(std::isfinite(loss));
        REQUIRE_FALSE(g.training.spans.empty());
        for (const zero::RankSpan& span : g.training.spans) {
          CHECK(span.start_us >= 0);
          CHECK(span.end_us >= span.start_us);
        }
        if (stage == 0) {
          gpu_stage0 = g.training.master_weights;
          const zero::ZeroTraining cpu = zero::train_sharded(c);
          // Adam's first steps move each weight by about the learning rate whatever the gradient's size, so a
          // gradient near zero whose sign differs between cuBLAS and OpenBLAS moves a weight by up to 2 lr a step.
          CHECK(max_rel_err(gpu_stage0, cpu.master_weights) <= 0.1);
          CHECK(std::abs(g.training.losses.front() - cpu.losses.front()) <= 1e-4 * std::abs(cpu.losses.front()));
        } else {
          CHECK(g.training.master_weights == gpu_stage0);
        }
      }
    }
}

TEST_CASE("zero runs whole on --backend cuda, every stage's ledger equal to the formula") {
  const auto r = testing::run_cli_captured({"run", "zero", "--backend", "cuda", "--quick", "--json", "-"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["backend"]["kind"] == "cuda");
  const auto& m = j["measured"];
  CHECK(m["on_gpu"] == true);
  CHECK_FALSE(m["placement"].get<std::string>().empty());
  CHECK(m["all_stages_match_formula"] == true);
  CHECK(m["all_stages_bit_identical"] == true);
  CHECK(m["sweep_matches_formula"] == true);
  CHECK(m["max_rel_err_gpu_vs_cpu_stage0"].get<double>() <= 0.1);
}
