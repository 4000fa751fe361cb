// The fusion lesson's kernels: each pass is a map over contiguous ranges (rows for the bias kernels, elements for the
// rest) written with kernels/common/simd.h's map_range, so unfused and fused kernels differ only in how many passes
// they make and what stays in registers between them.
#include <algorithm>
#include <vector>

#include "engine/parallel.h"
#include "kernels/common/simd.h"
#include "kernels/fusion/fusion.h"

namespace dlsys::fusion {

namespace {

using simd::cos_poly;
using simd::gelu_poly;
using simd::load;
using simd::map_range;
using simd::splat;
using simd::Vec;

// Bias of row r: the same (cols) vector for every row when broadcast, row r of a (rows, cols) array when full.
inline const float* bias_row(const float* b, std::int64_t r, std::int64_t cols, Bias bias) {
  return bias == Bias::Broadcast ? b : b + r * cols;
}

// A load for the passes with much arithmetic per element: their loads come spaced out, which the hardware
// prefetcher follows late, so each asks for its line half a page ahead (simd.h).
inline Vec load_ahead(const float* x, std::int64_t i) {
  simd::prefetch_ahead_at_line_start(x, i * std::int64_t(sizeof(float)));
  return load(x + i);
}

inline Vec relu(Vec v) { return simd::select(v > 0.0f, v, splat(0.0f)); }
inline float relu(float v) { return v > 0.0f ? v : 0.0f; }

// Applies `vec` / `one` to every element of rows [0, rows) of x into y, a row range per thread.
template <typename VecAt, typename OneAt>
void map_rows(float* y, std::int64_t rows, std::int64_t cols, int threads, Stores stores, VecAt vec, OneAt one) {
  parallel_for(rows, threads, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r)
      map_range(
          y + r * cols, 0, cols, stores, [&](std::int64_t i) { return vec(r, i); },
          [&](std::int64_t i) { return one(r, i); });
    simd::stream_fence();
  });
}

template <typename VecAt, typename OneAt>
void map_elements(float* y, std::int64_t n, int threads, Stores stores, VecAt vec, OneAt one) {
  parallel_for(n, threads, [&](std::int64_t begin, std::int64_t end) {
    map_range(y, begin, end, stores, vec, one);
    simd::stream_fence();
  });
}

// The chain's constants, computed once per call rather than once per element (each a_l is a division).
struct ChainConstants {
  std::vector<float> a, c;
  explicit ChainConstants(int length) {
    for (int l = 0; l < length; ++l) a.push_back(chain_a(l)), c.push_back(chain_c(l));
  }
  template <typename T>
  T apply(T v) const {
    for (std::size_t l = 0; l < a.size(); ++l) v = v * a[l] + c[l];
    return v;
  }
};

}  // namespace

void add_bias(float* t, const float* x, const float* b, std::int64_t rows, std::int64_t cols, Bias bias, int threads,
              Stores stores) {
  map_rows(
      t, rows, cols, threads, stores,
      [&](std::int64_t r, std::int64_t i) { return load(x + r * cols + i) + load(bias_row(b, r, cols, bias) + i); },
      [&](std::int64_t r, std::int64_t i) { return x[r * cols + i] + bias_row(b, r, cols, bias)[i]; });
}

void relu_pass(float* y, const float* t, std::int64_t n, int threads, Stores stores) {
  map_elements(
      y, n, threads, stores, [&](std::int64_t i) { return relu(load(t + i)); },
      [&](std::int64_t i) { return relu(t[i]); });
}

void add_bias_relu(float* y, const float* x, const float* b, std::int64_t rows, std::int64_t cols, Bias bias,
                   int threads, Stores stores) {
  map_rows(
      y, rows, cols, threads, stores,
      [&](std::int64_t r, std::int64_t i) {
        return relu(load(x + r * cols + i) + load(bias_row(b, r, cols, bias) + i));
      },
      [&](std::int64_t r, std::int64_t i) { return relu(x[r * cols + i] + bias_row(b, r, cols, bias)[i]); });
}

void cos_pass(float* y, const float* x, std::int64_t n, int threads, Stores stores) {
  map_elements(
      y, n, threads, stores, [&](std::int64_t i) { return cos_poly(load_ahead(x, i)); },
      [&](std::int64_t i) { return cos_poly(x[i]); });
}

void cos_cos(float* y, const float* x, std::int64_t n, int threads, Stores stores) {
  map_elements(
      y, n, threads, stores, [&](std::int64_t i) { return cos_poly(cos_poly(load_ahead(x, i))); },
      [&](std::int64_t i) { return cos_poly(cos_poly(x[i])); });
}

void gelu_pass(float* y, const float* x, std::int64_t n, int threads, Stores stores) {
  map_elements(
      y, n, threads, stores, [&](std::int64_t i) { return gelu_poly(load_ahead(x, i)); },
      [&](std::int64_t i) { return gelu_poly(x[i]); });
}

void chain_op(float* y, const float* x, std::int64_t n, int l, int threads, Stores stores) {
  const float a = chain_a(l), c = chain_c(l);
  map_elements(
      y, n, threads, stores, [&](std::int64_t i) { return load(x + i) * a + c; },
      [&](std::int64_t i) { return x[i] * a + c; });
}

void chain_fused(float* y, const float* x, std::int64_t n, int length, int threads, Stores stores) {
  const ChainConstants chain(length);
  map_elements(
      y, n, threads, stores, [&](std::int64_t i) { return chain.apply(load(x + i)); },
      [&](std::int64_t i) { return chain.apply(x[i]); });
}

}  // namespace dlsys::fusion
