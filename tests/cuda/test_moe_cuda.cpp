// The moe experts on the GPU: each expert's cuBLAS MLP within fp32's rounding bound of the CPU's at awkward sizes (rows
// that are a multiple of nothing, a single row, no rows, two ranks calling at once), the expert-parallel layer on them
// against the single-rank reference with an expert that receives no rows, and the lesson run whole on --backend cuda.
#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "engine/errors.h"
#include "engine/ledger.h"
#include "kernels/collectives/collectives_cuda.h"
#include "kernels/collectives/rank_group.h"
#include "kernels/moe/experts.h"
#include "kernels/moe/experts_cuda.h"
#include "kernels/moe/moe_layer.h"
#include "tests/support/cli_capture.h"
#include "tests/support/cuda_devices.h"
#include "tests/support/moe_ranks.h"

using namespace dlsys;
using namespace dlsys::moe;

namespace {

// One call on `gpu` against the CPU's MLP on the same rows.
MlpCheck gpu_against_cpu(ExpertMlps& gpu, const Experts& experts, int rank, int expert, std::int64_t rows,
                         std::uint64_t seed) {
  std::vector<float> x(std::size_t(rows * experts.hidden) + 1), y(x.size(), -7.0f), cpu(x.size());
  fill_uniform(x.data(), rows * experts.hidden, seed);
  gpu.forward(rank, expert, x.data(), rows, y.data());
  CpuExpertMlps(experts, 1).forward(0, expert, x.data(), rows, cpu.data());
  CHECK(y.back() == -7.0f);  // nothing written past the rows
  return check_mlp_outputs(experts.w1_of(expert), experts.w2_of(expert), experts.hidden, experts.ffn, x.data(), rows,
                           cpu.data(), y.data());
}

}  // namespace

TEST_CASE("moe on the GPU: each expert's cuBLAS MLP within fp32 rounding of the CPU's at awkward sizes") {
  struct Size {
    std::int64_t hidden, ffn;
  };
  for (const Size& s : {Size{37, 53}, Size{8, 8}, Size{256, 512}}) {
    INFO("H = ", s.hidden, ", F = ", s.ffn);
    const Experts experts = make_experts(3, s.hidden, s.ffn, 41);
    const std::int64_t most = 67;
    const std::unique_ptr<cuda::GpuExperts> gpu = cuda::make_gpu_experts(experts, 2, most, 1);
    CHECK(gpu->device_bytes() == cuda::gpu_experts_bytes(3, s.hidden, s.ffn, 2, most));
    for (const std::int64_t rows : {std::int64_t(1), std::int64_t(29), most}) {
      INFO("rows = ", rows);
      const MlpCheck check =
          gpu_against_cpu(*gpu, experts, int(rows % 2), int(rows % 3), rows, 5 + std::uint64_t(rows));
      CHECK(check.agrees());
      CHECK(check.largest_bound > 0);
    }
    // An expert with no rows: nothing uploaded, nothing written.
    float untouched = -7.0f;
    gpu->forward(0, 2, &untouched, 0, &untouched);
    CHECK(untouched == -7.0f);
    CHECK_THROWS_AS(gpu->forward(0, 0, nullptr, most + 1, nullptr), RunFailure);
  }
}

TEST_CASE("moe on the GPU: two ranks calling at once each get their own rows back") {
  const Experts experts = make_experts(4, 64, 96, 3);
  const std::unique_ptr<cuda::GpuExperts> gpu = cuda::make_gpu_experts(experts, 2, 301, 1);
  MlpCheck checks[2];
  std::thread other([&] { checks[1] = gpu_against_cpu(*gpu, experts, 1, 3, 301, 11); });
  checks[0] = gpu_against_cpu(*gpu, experts, 0, 1, 173, 12);
  other.join();
  CHECK(checks[0].agrees());
  CHECK(checks[1].agrees());
}

TEST_CASE("moe on the GPU: the expert-parallel layer equals the reference within the bound, an expert without rows") {
  const int n = 2;
  const MoeShape s{.tokens = 40, .hidden = 24, .ffn = 32, .experts = 8, .top_k = 1, .capacity_factor = 1.0, .ranks = n};
  const Router router = make_router(s.hidden, s.experts, 4.0, 3);  // the last expert gets no rows (test_moe.cpp)
  const Experts experts = make_experts(s.experts, s.hidden, s.ffn, 6);
  testing::MoeRanks ranks = testing::moe_ranks_with_reference(s, router, experts);
  REQUIRE(ranks.routings[0].kept.back() + ranks.routings[1].kept.back() == 0);
  MemoryLedger ledger;
  const auto group = collectives::make_thread_group(n, ledger, collectives::CommOptions{.full_mesh = true});
  const std::unique_ptr<cuda::GpuExperts> gpu = cuda::make_gpu_experts(experts, n, n * expert_capacity(s), 1);
  ExpertParallelLayer layer(s, router, experts, *group, gpu.get());
  group->run_on_ranks([&](int r) { layer.forward(r, ranks.x[std::size_t(r)].data(), ranks.y[std::size_t(r)].data()); });
  // The gates of a token sum to at most 1: its output moves by at most the largest expert bound, and with |x| < 1,
  // |W1| <= 1/sqrt(H) and |W2| <= 1/sqrt(F) every output's M = (|x| |W1|) |W2| is below sqrt(H F).
  const double tolerance = 1e-4 + mlp_rounding_factor(s.hidden, s.ffn) * std::sqrt(double(s.hidden * s.ffn));
  for (int r = 0; r < n; ++r)
    for (std::size_t i = 0; i < ranks.y[std::size_t(r)].size(); ++i)
      CHECK(std::fabs(double(ranks.y[std::size_t(r)][i]) - ranks.reference[std::size_t(r)][i]) <= tolerance);
}

TEST_CASE("moe runs on --backend cuda: the experts on the GPUs within fp32 rounding, checked against the CPU") {
  const auto j = testing::run_quick_on_cuda("moe");
  const auto& m = j["measured"];
  CHECK(m["experts_on_gpu"] == true);
  CHECK(m["experts_gpu_wrong"] == false);
  CHECK(m["experts_gpu_worst_share_of_bound"].get<double>() <= 1);
  CHECK(m["wrong"] == 0);
  CHECK(m["max_abs_err"].get<double>() <= m["output_tolerance"].get<double>());
  CHECK(m["gpu_bytes"].get<double>() > 0);
  CHECK(m["bytes_match_routing"] == 1);
  // Fewer GPUs than ranks: the ranks share GPU 0 and say so. A GPU each (with NCCL): the quick run's emulated wires
  // keep the all-to-alls on the rank threads, and the run says that instead.
  const bool gpu_per_rank = collectives::cuda::nccl_compiled() && testing::cuda_device_count() >= m["ranks"].get<int>();
  CHECK(testing::notes_mention(j, gpu_per_rank ? "link_gbps emulates wires" : "ranks emulated"));
}

TEST_CASE("moe with a GPU per rank: the all-to-alls over NCCL, the output equal to the reference's, bytes as routed") {
  if (!collectives::cuda::nccl_compiled()) return;
  const int ranks = std::min(2, testing::cuda_device_count());
  const auto j = testing::run_quick_on_cuda("moe", {"--set", "ranks=" + std::to_string(ranks), "--set", "link_gbps=0"});
  const auto& m = j["measured"];
  CHECK(m["ranks"] == ranks);
  CHECK(m["wrong"] == 0);
  CHECK(m["experts_gpu_wrong"] == false);
  CHECK(m["bytes_match_routing"] == 1);
  CHECK(j["backend"]["emulated"] == false);
  CHECK(testing::notes_mention(j, "over NCCL"));
}
