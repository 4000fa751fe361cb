// The GPU decode-step attention against the CPU routine both decode paths use, at awkward sizes
// (grouped-query heads, head_dim not a power of two, n not a multiple of the block).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "kernels/decoder/decoder.h"
#include "kernels/decoder/decoder_cuda.h"

using namespace dlsys;

namespace {
std::vector<float> pseudo_random(std::size_t count, std::uint32_t seed) {
  std::vector<float> values(count);
  for (auto& x : values) {
    seed = seed * 1664525u + 1013904223u;
    x = float(seed >> 8) / float(1u << 24) * 2.0f - 1.0f;
  }
  return values;
}
}  // namespace

TEST_CASE("CUDA decode attention matches the CPU attention row") {
  for (const decoder::Shape shape :
       {decoder::Shape{120, 1, 6, 2, 1}, decoder::Shape{64, 1, 4, 4, 1}, decoder::Shape{40, 1, 8, 1, 1}}) {
    for (const std::int64_t n : {1LL, 7LL, 1000LL}) {
      INFO("heads " << shape.heads << ", kv_heads " << shape.kv_heads << ", n " << n);
      const auto q = pseudo_random(std::size_t(shape.d_model), 1);
      const auto k = pseudo_random(std::size_t(n) * shape.kv_dim(), 2);
      const auto v = pseudo_random(std::size_t(n) * shape.kv_dim(), 3);
      std::vector<float> cpu(shape.d_model), gpu(shape.d_model), scores(n);
      decoder::attention_row(shape, q.data(), k.data(), v.data(), n, scores.data(), cpu.data());
      decoder::cuda::attention_row(shape, q.data(), k.data(), v.data(), n, gpu.data(), {.warmup = 0, .repeats = 1});
      for (int i = 0; i < shape.d_model; ++i) CHECK(std::abs(cpu[i] - gpu[i]) < 1e-5f);
    }
  }
}
