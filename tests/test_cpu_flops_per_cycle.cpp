// The per-core FP32 FLOP per cycle behind the CPU's nominal peak: exact for the families whose FMA pipes are known,
// an upper bound (and labelled so) for the rest.
#include <doctest/doctest.h>

#include "engine/cpu_flops_per_cycle.h"

using namespace dlsys;

TEST_CASE("nominal peak: FMA width per microarchitecture, not per vector width") {
  // Zen 4 (family 25, model 17 here) has AVX-512 but two 256-bit pipes: 2 x 8 lanes x 2 FLOP, as Zen 3 with AVX2.
  const auto zen4 = fp32_flops_per_cycle({"AuthenticAMD", 25, 17, true, true});
  CHECK(zen4.fp32_flop == 32);
  CHECK_FALSE(zen4.upper_bound);
  CHECK(fp32_flops_per_cycle({"AuthenticAMD", 25, 33, true, false}).fp32_flop == 32);  // Zen 3
  CHECK(fp32_flops_per_cycle({"AuthenticAMD", 23, 49, true, false}).fp32_flop == 32);  // Zen 2 (Rome)
  CHECK(fp32_flops_per_cycle({"AuthenticAMD", 23, 1, true, false}).fp32_flop == 16);   // Zen (Naples)
  CHECK(fp32_flops_per_cycle({"GenuineIntel", 6, 158, true, false}).fp32_flop == 32);  // Coffee Lake, AVX2
  // Intel AVX-512: one or two 512-bit ports; the lab cannot tell which, so it says upper bound.
  const auto skylake_sp = fp32_flops_per_cycle({"GenuineIntel", 6, 85, true, true});
  CHECK(skylake_sp.fp32_flop == 64);
  CHECK(skylake_sp.upper_bound);
  CHECK(fp32_flops_per_cycle({"AuthenticAMD", 26, 2, true, true}).upper_bound);       // Zen 5: not in the table yet
  CHECK(fp32_flops_per_cycle({"GenuineIntel", 6, 42, false, false}).fp32_flop == 0);  // Sandy Bridge: no FMA
}
