// CUDA attention against the CPU double reference at awkward sizes (ragged last tiles, n smaller than one tile, causal,
// several heads), every variant in its precision, with the accuracy rule of the CPU kernels: flash no more than twice
// standard attention's error in the same precision, plus a tiny epsilon. bf16 runs get inputs rounded to bf16 once,
// and the reference sees those same values, so the error measures the kernel. Outputs start as NaN on the host and on
// the device, so an element no kernel writes fails the check.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "engine/errors.h"
#include "kernels/attention/attention.h"
#include "kernels/attention/attention_cuda.h"

using namespace dlsys::attention;
using cuda::Precision;
using cuda::Variant;

namespace {

const dlsys::MeasureOptions kOnce{.warmup = 0, .repeats = 1};

struct HeadsProblem {
  Problem head;
  std::int64_t heads = 1;
  Precision precision = Precision::Fp32;
  std::vector<float> q, k, v;
  std::vector<double> ref;  // (heads, n, d)

  HeadsProblem(std::int64_t n, std::int64_t d, bool causal, std::int64_t h, Precision p)
      : head{n, d, causal, default_scale(d)}, heads(h), precision(p) {
    const std::size_t count = std::size_t(h * n * d), per_head = std::size_t(n * d);
    q.resize(count), k.resize(count), v.resize(count), ref.resize(count);
    fill_uniform(q, 11);
    fill_uniform(k, 12);
    fill_uniform(v, 13);
    if (p == Precision::Bf16)
      for (auto* x : {&q, &k, &v}) round_to_bf16(*x);
    for (std::int64_t i = 0; i < h; ++i)
      reference(head, q.data() + i * per_head, k.data() + i * per_head, v.data() + i * per_head,
                ref.data() + i * per_head, 8);
  }

  // Runs `variant` and returns its largest error over every head (infinite if anything is NaN).
  double error_of(Variant variant, const Tiling& tiling = {64, 64}) const {
    std::vector<float> o(q.size(), std::numeric_limits<float>::quiet_NaN());
    cuda::run({variant, precision, heads, tiling}, head, q.data(), k.data(), v.data(), o.data(), kOnce);
    return max_abs_error(o, ref);
  }
};

}  // namespace

TEST_CASE("CUDA attention: every variant matches the double reference at awkward sizes, heads and masks") {
  int case_index = 0;
  for (const std::int64_t n : {1, 7, 63, 65, 129, 1000})
    for (const std::int64_t d : {32, 64, 128})
      for (const bool causal : {false, true}) {
        const std::int64_t heads = (case_index++ % 2 == 0) ? 1 : 3;
        INFO("n=", n, " d=", d, " causal=", causal, " heads=", heads);
        {
          const HeadsProblem p(n, d, causal, heads, Precision::Fp32);
          const double naive = p.error_of(Variant::Naive);
          const double general = p.error_of(Variant::Flash, {48, 48});
          const double registers = p.error_of(Variant::FlashRegisters);
          INFO("fp32 errors: naive ", naive, ", v2_flash ", general, ", v3_flash_registers ", registers);
          CHECK(naive < 1e-5);
          CHECK(general < 1e-5);
          CHECK(registers < 1e-5);
          CHECK(meets_accuracy_rule(general, naive));
          CHECK(meets_accuracy_rule(registers, naive));
        }
        {
          const HeadsProblem p(n, d, causal, heads, Precision::Bf16);
          const double naive = p.error_of(Variant::Naive);
          const double tensor = p.error_of(Variant::FlashTensor);
          INFO("bf16 errors: naive ", naive, ", v4_flash_tensor ", tensor);
          CHECK(naive < 1e-2);  // P rounded to bf16: relative 2^-9 per weight
          CHECK(tensor < 1e-2);
          CHECK(meets_accuracy_rule(tensor, naive));
        }
      }
}

TEST_CASE("CUDA attention: d without a fast path runs the plain kernel; the fast ones refuse it by name") {
  for (const std::int64_t d : {1, 3, 33, 96})
    for (const bool causal : {false, true}) {
      INFO("d=", d, " causal=", causal);
      const HeadsProblem p(129, d, causal, 2, Precision::Fp32);
      const double naive = p.error_of(Variant::Naive);
      const double general = p.error_of(Variant::Flash, {16, 24});
      CHECK(naive < 1e-5);
      CHECK(general < 1e-5);
      CHECK(meets_accuracy_rule(general, naive));
    }
  const HeadsProblem fp32(65, 48, false, 1, Precision::Fp32);
  CHECK_THROWS_WITH_AS(fp32.error_of(Variant::FlashRegisters),
                       "parameter 'd': value 48 is not allowed for v3_flash_registers; allowed: 32, 64 or 128",
                       dlsys::BadInput);
  CHECK_THROWS_AS(fp32.error_of(Variant::FlashTensor), dlsys::BadInput);  // fp32 inputs to the bf16 kernel
  const HeadsProblem bf16(65, 48, false, 1, Precision::Bf16);
  for (const Variant variant : {Variant::Naive, Variant::FlashTensor})
    CHECK_THROWS_WITH_AS(bf16.error_of(variant),
                         doctest::Contains("parameter 'd': value 48 is not allowed with precision=bf16"),
                         dlsys::BadInput);
}

TEST_CASE("CUDA attention: standard attention refuses scores larger than the device's free memory") {
  // 16 heads of 65536^2 fp32 scores are 275 GB; q, k, v themselves are 134 MB each.
  const Problem head{65536, 32, false, default_scale(32)};
  const std::size_t count = std::size_t(16) * 65536 * 32;
  std::vector<float> x(count, 0.5f), o(count);
  try {
    cuda::run({Variant::Naive, Precision::Fp32, 16, {}}, head, x.data(), x.data(), x.data(), o.data(), kOnce);
    FAIL("no BadInput");
  } catch (const dlsys::BadInput& e) {
    const std::string message = e.what();
    CHECK(message.find("n x n scores of every head") != std::string::npos);
    CHECK(message.find("free") != std::string::npos);
  }
}
