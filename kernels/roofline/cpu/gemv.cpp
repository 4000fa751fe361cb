// Decode's matrix-vector product with bfloat16 weights, as a served model keeps them: every weight is read once and
// used for one multiply-add, so the kernel streams W at memory speed and does 1 FLOP per byte. A bfloat16 becomes an
// fp32 by moving its 16 bits to the top, which vectorises as a widening and a shift. Rows are split over the threads,
// and each thread walks kRowsAtOnce rows side by side: one core keeps only so many cache misses in flight per stream,
// and four streams of W draw from memory faster than one (about 1.45x here), while each load of x serves four rows.
// Each stream also asks for its lines half a page ahead (simd.h): with short rows the four streams share a page.
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

constexpr int kRowsAtOnce = 4;

// y[r] = W[r] . x for R consecutive rows, two partial sums per row so the adds of a row do not wait on each other.
template <int R>
void rows_dot(float* y, const std::uint16_t* w, const float* x, std::int64_t cols) {
  Vec acc[R][2];
  for (auto& row : acc) row[0] = row[1] = splat(0.0f);
  std::int64_t i = 0;
  for (; i + 2 * kFloats <= cols; i += 2 * kFloats) {
    const Vec x0 = load(x + i), x1 = load(x + i + kFloats);
    for (int r = 0; r < R; ++r) {
      simd::prefetch_ahead_at_line_start(w + r * cols, i * std::int64_t(sizeof(std::uint16_t)));
      acc[r][0] += load_bf16(w + r * cols + i) * x0;
      acc[r][1] += load_bf16(w + r * cols + i + kFloats) * x1;
    }
  }
  for (int r = 0; r < R; ++r) {
    const Vec both = acc[r][0] + acc[r][1];
    float sum = 0;
    for (int l = 0; l < kFloats; ++l) sum += both[l];
    for (std::int64_t j = i; j < cols; ++j) sum += from_bf16(w[r * cols + j]) * x[j];
    y[r] = sum;
  }
}

}  // namespace

void gemv_bf16(float* y, const std::uint16_t* w, const float* x, std::int64_t rows, std::int64_t cols, int threads) {
  parallel_for(rows, threads, [&](std::int64_t begin, std::int64_t end) {
    std::int64_t r = begin;
    for (; r + kRowsAtOnce <= end; r += kRowsAtOnce) rows_dot<kRowsAtOnce>(y + r, w + r * cols, x, cols);
    for (; r < end; ++r) rows_dot<1>(y + r, w + r * cols, x, cols);
  });
}

}  // namespace dlsys::roofline
