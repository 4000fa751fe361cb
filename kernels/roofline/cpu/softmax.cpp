// Row softmax in three passes over each row: its max; e = exp(x - max), kept in a scratch row and summed; then
// y = e / sum. A row (16 KiB at 4096 columns) and its scratch stay in the first-level cache between passes, so main
// memory sees each element read once and written once. The exp is a polynomial on whole vectors
// (kernels/common/simd.h), taken once per element. Here the arithmetic still bounds the kernel: taking the exp again
// in the last pass held it to 22 GB/s from memory and 24 with its rows in cache; once, it reads 25 from memory.
#include <cmath>
#include <vector>

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

// e = exp(x - m) over the row; returns its sum.
float exp_into(float* e, const float* x, std::int64_t cols, float m) {
  Vec sv = splat(0.0f);
  std::int64_t i = 0;
  for (; i + kFloats <= cols; i += kFloats) {
    const Vec v = exp_poly(load(x + i) - m);
    simd::store(e + i, v);
    sv += v;
  }
  float s = 0;
  for (int l = 0; l < kFloats; ++l) s += sv[l];
  for (; i < cols; ++i) s += e[i] = exp_poly(x[i] - m);
  return s;
}

void softmax_row(float* y, const float* x, float* e, std::int64_t cols, Stores stores) {
  const float m = row_max(x, cols);
  const float inv = 1.0f / exp_into(e, x, cols, m);
  simd::map_range(
      y, 0, cols, stores, [&](std::int64_t i) { return load(e + i) * inv; },
      [&](std::int64_t i) { return e[i] * inv; });
}

}  // namespace

void softmax_rows(float* y, const float* x, std::int64_t rows, std::int64_t cols, int threads, Stores stores) {
  parallel_for(rows, threads, [&](std::int64_t begin, std::int64_t end) {
    std::vector<float> e(static_cast<std::size_t>(cols));
    for (std::int64_t r = begin; r < end; ++r) softmax_row(y + r * cols, x + r * cols, e.data(), cols, stores);
    simd::stream_fence();
  });
}

}  // namespace dlsys::roofline
