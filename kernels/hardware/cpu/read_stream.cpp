// The read stream (hardware.h): vector loads into independent sums, no stores; and the bandwidth it reaches.
#include <fmt/format.h>

#include <vector>

#include "engine/errors.h"
#include "engine/measure.h"
#include "engine/parallel.h"
#include "kernels/common/cache_flush.h"
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

double measure_read_stream_gbps(int threads) {
  const std::int64_t count = std::int64_t(1) << 24;
  const std::vector<float> ones(static_cast<std::size_t>(count), 1.0f);
  double sum = 0;
  const TimingStats t = measure([&] { sum = read_sum(ones.data(), count, 1, threads); }, {.warmup = 1, .repeats = 8},
                                [&] { evict_from_caches(ones.data(), ones.size() * sizeof(float)); });
  if (sum != double(count))  // every partial sum stays below 2^24: exact
    throw RunFailure(fmt::format("the read stream summed {} ones to {}", count, sum));
  return 4.0 * double(count) / (t.min_us * 1e3);
}

}  // namespace dlsys::hardware
