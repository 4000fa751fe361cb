// The mesh's ranks' products on the GPU: each cuBLAS product against OpenBLAS's at awkward sizes (every transpose the
// MLP block uses, sizes that are a multiple of nothing, a weight operand read from the GPU's copy of the shard, beta =
// 1 adding to what the host holds, two ranks calling at once), and the lesson run whole on --backend cuda.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "engine/errors.h"
#include "kernels/mesh/mesh_gemms_cuda.h"
#include "kernels/pipeline/mlp_block.h"
#include "tests/support/cli_capture.h"
#include "tests/support/cuda_devices.h"

using namespace dlsys;
using namespace dlsys::mesh;

namespace {

std::vector<float> uniform(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

// One product on the GPU against OpenBLAS's, each element within fp32's rounding of both sums of k products:
// |difference| <= 2 g_k (|op(a)| |op(b)| + |beta c|), g_k = k u / (1 - k u), u = 2^-24 (checked in double).
void check_product(RankGemms& gpu, int rank, bool ta, bool tb, int m, int n, int k, const float* a, const float* b,
                   float beta) {
  std::vector<float> c = uniform(std::size_t(m) * n + 1, unsigned(m * 7 + n));
  c.back() = -7.0f;
  const std::vector<float> start = c;
  std::vector<float> cpu = c;
  gpu.gemm(rank, ta, tb, m, n, k, a, b, beta, c.data());
  pipeline::mlp::openblas_gemm()(ta, tb, m, n, k, a, b, beta, cpu.data());
  CHECK(c.back() == -7.0f);  // nothing written past the result
  const double u = std::ldexp(1.0, -24), g = (k + 1) * u / (1 - (k + 1) * u);
  int wrong = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double magnitude = std::fabs(double(beta) * start[std::size_t(i * n + j)]);
      for (int l = 0; l < k; ++l)
        magnitude += std::fabs(double(ta ? a[std::size_t(l * m + i)] : a[std::size_t(i * k + l)]) *
                               double(tb ? b[std::size_t(j * k + l)] : b[std::size_t(l * n + j)]));
      const std::size_t at = std::size_t(i * n + j);
      if (std::fabs(double(c[at]) - double(cpu[at])) > 2 * g * magnitude) ++wrong;
    }
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("mesh on the GPU: each rank's cuBLAS products within fp32 rounding of OpenBLAS's at awkward sizes") {
  // A block of width w = 37 and inner f = 53 on rows = 19: the shard [W1 (w, f) | W2 (f, w)], as a rank holds it.
  const int rows = 19, w = 37, f = 53;
  const std::int64_t shard_elements = 2 * std::int64_t(w) * f;
  const std::int64_t most = std::int64_t(w) * f;
  const std::unique_ptr<RankGemms> gpu = cuda::make_gpu_rank_gemms(2, shard_elements, most);
  CHECK(gpu->device_bytes() == cuda::gpu_rank_gemms_bytes(2, shard_elements, most));
  const std::vector<float> shard = uniform(std::size_t(shard_elements), 3);
  const float *w1 = shard.data(), *w2 = shard.data() + std::int64_t(w) * f;
  gpu->weights_changed(1, shard.data(), shard_elements);
  const std::vector<float> x = uniform(std::size_t(rows) * w, 5), z = uniform(std::size_t(rows) * f, 6);
  check_product(*gpu, 1, false, false, rows, f, w, x.data(), w1, 0.0f);       // x W1 (W1 from the GPU's copy)
  check_product(*gpu, 1, false, false, rows, w, f, z.data(), w2, 1.0f);       // y += a W2
  check_product(*gpu, 1, false, true, rows, f, w, x.data(), w2, 0.0f);        // dy W2^T
  check_product(*gpu, 1, false, true, rows, w, f, z.data(), w1, 1.0f);        // dx += dz W1^T
  check_product(*gpu, 0, true, false, f, w, rows, z.data(), x.data(), 1.0f);  // dW2 += a^T dy (no shard on rank 0)
  check_product(*gpu, 0, true, false, w, f, rows, x.data(), z.data(), 1.0f);  // dW1 += x^T dz
  check_product(*gpu, 0, false, false, 1, 1, 1, x.data(), z.data(), 0.0f);    // one element
  // The copy follows the host's shard once told: a changed W1 gives the changed product.
  std::vector<float> changed = shard;
  for (float& v : changed) v = -v;
  gpu->weights_changed(1, changed.data(), shard_elements);
  check_product(*gpu, 1, false, false, rows, f, w, x.data(), changed.data(), 0.0f);
  CHECK_THROWS_AS(gpu->weights_changed(0, shard.data(), shard_elements - 1), RunFailure);
  std::vector<float> big(std::size_t(most) + 1);
  CHECK_THROWS_AS(gpu->gemm(0, false, false, 1, int(most) + 1, 1, big.data(), big.data(), 0.0f, big.data()),
                  RunFailure);
}

TEST_CASE("mesh on the GPUs: two ranks calling at once each get their own product back, on a GPU each where two") {
  const int m = 64, n = 96, k = 80;
  const int gpus = std::min(2, testing::cuda_device_count());
  const std::unique_ptr<RankGemms> gpu = cuda::make_gpu_rank_gemms(2, 1, std::int64_t(n) * k, gpus);
  CHECK(gpu->device_bytes() == cuda::gpu_rank_gemms_bytes(2, 1, std::int64_t(n) * k));
  const std::vector<float> a = uniform(std::size_t(m) * k, 8), b = uniform(std::size_t(k) * n, 9);
  std::thread other([&] { check_product(*gpu, 1, false, true, m, n, k, a.data(), b.data(), 0.0f); });
  check_product(*gpu, 0, false, false, m, n, k, a.data(), b.data(), 1.0f);
  other.join();
}

TEST_CASE("mesh runs on --backend cuda: the ranks' products on a GPU each or all on GPU 0, the updates one device's") {
  const auto j = testing::run_quick_on_cuda("mesh");
  const auto& m = j["measured"];
  const int ranks = j["theory"]["ranks"].get<int>();
  const bool gpu_per_rank = testing::cuda_device_count() >= ranks;
  CHECK(m["gemms_on_gpu"] == true);
  CHECK(m["gpus"] == (gpu_per_rank ? ranks : 1));
  CHECK(m["gpu_bytes"].get<double>() > 0);
  CHECK(m["within_tolerance"] == true);
  CHECK(m["update_max_rel_err"].get<double>() < j["theory"]["update_tolerance"].get<double>());
  CHECK(m["bytes_match"] == true);
  CHECK(m["memory_match"] == true);
  CHECK(m["replicas_identical"] == true);
  CHECK(testing::notes_mention(j, gpu_per_rank ? "has a GPU of its own" : "ranks emulated"));
}

TEST_CASE("mesh on --backend cuda with two ranks: a GPU each where there are two, else both on GPU 0") {
  const auto j = testing::run_quick_on_cuda("mesh", {"--set", "dp=1", "--set", "tp=2", "--set", "pp=1"});
  const bool two = testing::cuda_device_count() >= 2;
  CHECK(j["measured"]["gpus"] == (two ? 2 : 1));
  CHECK(j["measured"]["within_tolerance"] == true);
  CHECK(testing::notes_mention(j, two ? "has a GPU of its own" : "ranks emulated"));
}
