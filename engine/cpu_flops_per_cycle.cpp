#include "engine/cpu_flops_per_cycle.h"

#include <fmt/format.h>

namespace dlsys {

namespace {
// FMA units x fp32 lanes per unit x 2 FLOP (a multiply and an add).
constexpr int flop_per_cycle(int fma_units, int vector_bits) { return fma_units * (vector_bits / 32) * 2; }
}  // namespace

CoreFlopsPerCycle fp32_flops_per_cycle(const CpuIdentity& cpu) {
  if (!cpu.fma) return {0, false, "no FMA instructions"};
  // Pipe widths from AMD's software optimization guides for families 17h and 19h.
  if (cpu.vendor == "AuthenticAMD" && cpu.family == 0x19)
    return {flop_per_cycle(2, 256), false,
            "AMD family 25 (Zen 3, Zen 4): two 256-bit FMA pipes; Zen 4 runs AVX-512 as two 256-bit halves"};
  if (cpu.vendor == "AuthenticAMD" && cpu.family == 0x17)
    return cpu.model >= 0x30 ? CoreFlopsPerCycle{flop_per_cycle(2, 256), false, "AMD Zen 2: two 256-bit FMA pipes"}
                             : CoreFlopsPerCycle{flop_per_cycle(2, 128), false, "AMD Zen, Zen+: two 128-bit FMA pipes"};
  // Intel's big cores from Haswell on have two 256-bit FMA ports; with AVX-512 a part has one or two 512-bit ones,
  // which its model number alone does not tell.
  if (cpu.vendor == "GenuineIntel" && cpu.family == 6 && !cpu.avx512f)
    return {flop_per_cycle(2, 256), false, "Intel (Haswell and later cores): two 256-bit FMA ports"};
  const int bits = cpu.avx512f ? 512 : 256;
  return {flop_per_cycle(2, bits), true,
          fmt::format("{} family {} is not in the lab's table: counted as two {}-bit FMA units",
                      cpu.vendor.empty() ? std::string("this CPU") : cpu.vendor, cpu.family, bits)};
}

}  // namespace dlsys
