// The read stream (hardware.h): vector loads into independent sums, no stores.
#include <vector>

#include "engine/parallel.h"
#include "kernels/common/simd.h"
#include "kernels/hardware/hardware.h"

namespace dlsys::hardware {

using simd::kFloats;
using simd::load;
using simd::Vec;

namespace {

// Eight sums: a vector add waits for the previous add into the same sum (3-4 cycles), and a core issues two loads a
// cycle, so fewer sums would make the adds, not the loads, the limit while the data sits in the first-level cache.
// The sums run on across passes and are added up once at the end, so a small working set read many times pays for
// no horizontal sum per pass.
double sum_passes(const float* x, std::int64_t begin, std::int64_t end, std::int64_t passes) {
  Vec s[8] = {};
  const std::int64_t vector_end = begin + (end - begin) / (8 * kFloats) * (8 * kFloats);
  for (std::int64_t p = 0; p < passes; ++p) {
    // The compiler must assume memory changed between passes, so it reads every pass again rather than once.
    asm volatile("" ::: "memory");
    for (std::int64_t i = begin; i < vector_end; i += 8 * kFloats)
      for (int k = 0; k < 8; ++k) s[k] += load(x + i + k * kFloats);
  }
  double total = 0;
  for (const Vec& v : s)
    for (int lane = 0; lane < kFloats; ++lane) total += double(v[lane]);
  for (std::int64_t i = vector_end; i < end; ++i) total += double(passes) * double(x[i]);
  return total / double(passes);
}

}  // namespace

double read_sum(const float* x, std::int64_t n, std::int64_t passes, int threads) {
  std::vector<double> part_sums(static_cast<std::size_t>(threads), 0.0);
  parallel_for(threads, threads, [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t t = first; t < last; ++t)
      part_sums[std::size_t(t)] = sum_passes(x, n * t / threads, n * (t + 1) / threads, passes);
  });
  double total = 0;
  for (double s : part_sums) total += s;
  return total;
}

}  // namespace dlsys::hardware
