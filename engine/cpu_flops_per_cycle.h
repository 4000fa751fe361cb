#pragma once
// FP32 FLOP one core can issue per cycle, from what /proc/cpuinfo says about the CPU. The vector width alone does not
// say it: AMD's Zen 4 runs AVX-512 instructions on two 256-bit FMA pipes (the same 32 FLOP per cycle as AVX2 on two
// pipes), and some Intel AVX-512 parts have one 512-bit FMA port, others two. Families whose FMA pipes are known get
// an exact figure; any other CPU gets an upper bound (two FMA units of its widest vector), labelled as one.
#include <string>

namespace dlsys {

struct CpuIdentity {
  std::string vendor;  // "AuthenticAMD", "GenuineIntel", ...
  int family = 0, model = 0;
  bool fma = false, avx512f = false;
};

struct CoreFlopsPerCycle {
  int fp32_flop = 0;        // per core per cycle; 0 when the CPU has no FMA
  bool upper_bound = true;  // not known for this family: the most its widest FMA vector allows
  std::string why;          // e.g. "AMD family 25 (Zen 3, Zen 4): two 256-bit FMA pipes"
};

CoreFlopsPerCycle fp32_flops_per_cycle(const CpuIdentity& cpu);

}  // namespace dlsys
