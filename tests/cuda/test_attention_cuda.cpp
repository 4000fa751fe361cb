// CUDA attention against the CPU double reference, at awkward sizes (ragged last tiles, causal, tiny d), with the
// same accuracy rule as the CPU kernels: flash no more than twice naive's error plus a tiny epsilon.
#include <doctest/doctest.h>

#include <vector>

#include "kernels/attention/attention.h"
#include "kernels/attention/attention_cuda.h"

using namespace dlsys::attention;

TEST_CASE("CUDA v1_naive and v2_flash match the CPU reference") {
  struct Case {
    std::int64_t n, d;
    bool causal;
    Tiling tiling;
  };
  const Case cases[] = {{1, 1, false, {1, 1}},     {7, 3, true, {2, 3}},       {33, 16, false, {5, 7}},
                        {100, 64, true, {48, 48}}, {257, 64, false, {64, 32}}, {1000, 128, true, {32, 64}}};
  const dlsys::MeasureOptions once{.warmup = 0, .repeats = 1};
  for (const Case& c : cases) {
    INFO("n=", c.n, " d=", c.d, " causal=", c.causal, " br=", c.tiling.br, " bc=", c.tiling.bc);
    const Problem p{c.n, c.d, c.causal, default_scale(c.d)};
    const std::size_t count = static_cast<std::size_t>(c.n * c.d);
    std::vector<float> q(count), k(count), v(count), o(count);
    std::vector<double> ref(count);
    fill_uniform(q, 1);
    fill_uniform(k, 2);
    fill_uniform(v, 3);
    reference(p, q.data(), k.data(), v.data(), ref.data(), 2);
    const auto naive = cuda::run(cuda::Variant::Naive, p, c.tiling, q.data(), k.data(), v.data(), o.data(), once);
    const double naive_err = max_abs_error(o, ref);
    CHECK(naive_err < 1e-5);
    CHECK(naive.device_scratch_bytes == c.n * c.n * 4);
    cuda::run(cuda::Variant::Flash, p, c.tiling, q.data(), k.data(), v.data(), o.data(), once);
    const double flash_err = max_abs_error(o, ref);
    INFO("naive_err=", naive_err, " flash_err=", flash_err);
    CHECK(flash_err < 1e-5);
    CHECK(meets_accuracy_rule(flash_err, naive_err));
  }
}
