// Decode's matrix-vector product with bfloat16 weights, as a served model keeps them: every weight is read once and
// used for one multiply-add, so the kernel streams W at memory speed and does 1 FLOP per byte. Rows are split over
// the threads; x (a few KiB) stays in cache. A bfloat16 becomes an fp32 by moving its 16 bits to the top, which
// vectorises as a widening and a shift.
#include "engine/parallel.h"
#include "kernels/common/simd.h"
#include "kernels/roofline/roofline.h"

namespace dlsys::roofline {

namespace {

using simd::kFloats;
using simd::load;
using simd::splat;
using simd::Vec;

typedef std::uint16_t HalfVec __attribute__((vector_size(kFloats * sizeof(std::uint16_t))));
typedef std::uint32_t WordVec __attribute__((vector_size(kFloats * sizeof(std::uint32_t))));

inline Vec load_bf16(const std::uint16_t* p) {
  HalfVec h;
  __builtin_memcpy(&h, p, sizeof h);
  const WordVec bits = __builtin_convertvector(h, WordVec) << 16;
  Vec v;
  __builtin_memcpy(&v, &bits, sizeof v);
  return v;
}

constexpr int kAccumulators = 4;  // independent partial sums: the adds of one row do not wait on each other

float row_dot(const std::uint16_t* w, const float* x, std::int64_t cols) {
  Vec acc[kAccumulators];
  for (Vec& a : acc) a = splat(0.0f);
  std::int64_t i = 0;
  for (; i + kAccumulators * kFloats <= cols; i += kAccumulators * kFloats)
    for (int u = 0; u < kAccumulators; ++u) acc[u] += load_bf16(w + i + u * kFloats) * load(x + i + u * kFloats);
  for (; i + kFloats <= cols; i += kFloats) acc[0] += load_bf16(w + i) * load(x + i);
  for (int u = 1; u < kAccumulators; ++u) acc[0] += acc[u];
  float sum = 0;
  for (int l = 0; l < kFloats; ++l) sum += acc[0][l];
  for (; i < cols; ++i) sum += from_bf16(w[i]) * x[i];
  return sum;
}

}  // namespace

void gemv_bf16(float* y, const std::uint16_t* w, const float* x, std::int64_t rows, std::int64_t cols, int threads) {
  parallel_for(rows, threads, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) y[r] = row_dot(w + r * cols, x, cols);
  });
}

}  // namespace dlsys::roofline
