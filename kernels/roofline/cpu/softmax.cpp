// Row softmax in three passes over each row: its max, the sum of exp(x - max), then y = exp(x - max) / sum. A row
// (16 KiB at 4096 columns) stays in the first-level cache between passes, so main memory sees each element read once
// and written once, and the kernel is memory-bound despite two exps per element: they are polynomials on whole
// vectors (kernels/common/simd.h).
#include <cmath>

#include "engine/parallel.h"
#include "kernels/common/simd.h"
#include "kernels/roofline/roofline.h"

namespace dlsys::roofline {

namespace {

using simd::exp_poly;
using simd::kFloats;
using simd::load;
using simd::select;
using simd::splat;
using simd::Vec;

float row_max(const float* x, std::int64_t cols) {
  float m = -INFINITY;
  std::int64_t i = 0;
  if (cols >= kFloats) {
    Vec mv = load(x);
    for (i = kFloats; i + kFloats <= cols; i += kFloats) {
      const Vec v = load(x + i);
      mv = select(v > mv, v, mv);
    }
    for (int l = 0; l < kFloats; ++l) m = std::max(m, mv[l]);
  }
  for (; i < cols; ++i) m = std::max(m, x[i]);
  return m;
}

float sum_exp(const float* x, std::int64_t cols, float m) {
  Vec sv = splat(0.0f);
  std::int64_t i = 0;
  for (; i + kFloats <= cols; i += kFloats) sv += exp_poly(load(x + i) - m);
  float s = 0;
  for (int l = 0; l < kFloats; ++l) s += sv[l];
  for (; i < cols; ++i) s += exp_poly(x[i] - m);
  return s;
}

void softmax_row(float* y, const float* x, std::int64_t cols, Stores stores) {
  const float m = row_max(x, cols);
  const float inv = 1.0f / sum_exp(x, cols, m);
  simd::map_range(
      y, 0, cols, stores, [&](std::int64_t i) { return exp_poly(load(x + i) - m) * inv; },
      [&](std::int64_t i) { return exp_poly(x[i] - m) * inv; });
}

}  // namespace

void softmax_rows(float* y, const float* x, std::int64_t rows, std::int64_t cols, int threads, Stores stores) {
  parallel_for(rows, threads, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) softmax_row(y + r * cols, x + r * cols, cols, stores);
    simd::stream_fence();
  });
}

}  // namespace dlsys::roofline
