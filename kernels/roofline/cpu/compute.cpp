// The compute ceiling and the intensity family. Both keep kChains vectors of independent multiply-add chains in flight
// per thread: an FMA's result is ready only some cycles after it starts (4 on recent x86 cores) and a core can start
// two per cycle, so fewer chains would leave the units waiting on their own previous results, not on memory.
#include <algorithm>
#include <vector>

#include "engine/parallel.h"
#include "kernels/common/simd.h"
#include "kernels/roofline/roofline.h"
#include "kernels/roofline/roofline_math.h"

namespace dlsys::roofline {

namespace {

using simd::kFloats;
using simd::load;
using simd::splat;
using simd::Vec;

constexpr int kChains = 12;  // > 2 FMA units x 4 cycles of latency, and within 16 registers on AVX2

// Checksum of one thread's chains after `iterations` steps.
double peak_chains(std::int64_t iterations, int seed) {
  const Vec a = splat(kFamilyA), c = splat(kFamilyC);
  Vec v[kChains];
  for (int u = 0; u < kChains; ++u) v[u] = splat(0.01f * float(u + seed));
  for (std::int64_t it = 0; it < iterations; ++it)
    for (int u = 0; u < kChains; ++u) v[u] = v[u] * a + c;
  double sum = 0;
  for (int u = 0; u < kChains; ++u)
    for (int l = 0; l < kFloats; ++l) sum += v[u][l];
  return sum;
}

// k multiply-adds on kChains vectors of consecutive elements at once.
inline void family_block(float* y, const float* x, std::int64_t k, const Vec& a, const Vec& c, Stores stores) {
  Vec v[kChains];
  for (int u = 0; u < kChains; ++u) {
    simd::prefetch_ahead_at_line_start(x, u * simd::kVectorBytes);
    v[u] = load(x + u * kFloats);
  }
  for (std::int64_t j = 0; j < k; ++j)
    for (int u = 0; u < kChains; ++u) v[u] = v[u] * a + c;
  for (int u = 0; u < kChains; ++u)
    stores == Stores::Streaming ? simd::stream(y + u * kFloats, v[u]) : simd::store(y + u * kFloats, v[u]);
}

inline float family_one(float v, std::int64_t k) {
  for (std::int64_t j = 0; j < k; ++j) v = v * kFamilyA + kFamilyC;
  return v;
}

void family_range(float* y, const float* x, std::int64_t begin, std::int64_t end, std::int64_t k, Stores stores) {
  const Vec a = splat(kFamilyA), c = splat(kFamilyC);
  std::int64_t i = begin;
  if (stores == Stores::Streaming)
    for (const std::int64_t head = begin + simd::elements_to_alignment(y + begin, end - begin); i < head; ++i)
      y[i] = family_one(x[i], k);
  for (; i + kChains * kFloats <= end; i += kChains * kFloats) family_block(y + i, x + i, k, a, c, stores);
  for (; i < end; ++i) y[i] = family_one(x[i], k);
  if (stores == Stores::Streaming) simd::stream_fence();
}

}  // namespace

int vector_lanes() { return kFloats; }
int fma_peak_chains() { return kChains; }

double fma_peak(int threads, std::int64_t iterations) {
  std::vector<double> sums(std::size_t(std::max(threads, 1)));
  parallel_for(threads, threads, [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t t = first; t < last; ++t) sums[std::size_t(t)] = peak_chains(iterations, int(t));
  });
  double total = 0;
  for (double s : sums) total += s;
  return total;
}

double fma_peak_flop(int threads, std::int64_t iterations) {
  return 2.0 * double(std::max(threads, 1)) * double(iterations) * kChains * kFloats;
}

void fma_family(float* y, const float* x, std::int64_t n, std::int64_t k, int threads, Stores stores) {
  parallel_for(n, threads, [&](std::int64_t begin, std::int64_t end) { family_range(y, x, begin, end, k, stores); });
}

double fma_family_reference(float x, std::int64_t k) {
  double v = x;
  for (std::int64_t j = 0; j < k; ++j) v = v * double(kFamilyA) + double(kFamilyC);
  return v;
}

}  // namespace dlsys::roofline
