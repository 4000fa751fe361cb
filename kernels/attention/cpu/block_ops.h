#pragma once
// The inner loops both CPU kernels share, so naive and tiled attention differ only in what they keep in memory:
// the same dot products make the scores, the same exp, the same row updates make the output.
#include <algorithm>
#include <cmath>
#include <cstdint>

namespace dlsys::attention::detail {

// a . b over d elements. Sixteen independent partial sums let the compiler use vector lanes without reordering a
// single serial sum (which it may not do for floats without -ffast-math).
template <typename T>
inline T dot(const T* a, const T* b, std::int64_t d) {
  constexpr int kLanes = 16;
  T lanes[kLanes] = {};
  std::int64_t l = 0;
  for (; l + kLanes <= d; l += kLanes)
    for (int t = 0; t < kLanes; ++t) lanes[t] += a[l + t] * b[l + t];
  T sum = 0;
  for (int t = 0; t < kLanes; ++t) sum += lanes[t];
  for (; l < d; ++l) sum += a[l] * b[l];
  return sum;
}

// s[r][c] = scale * q_(row_begin + r) . k_(col_begin + c) for r < rows, c < cols (ld_s apart), with -inf where the
// causal mask hides key col from query row (col > row).
template <typename T>
inline void scores_block(const T* q, std::int64_t row_begin, std::int64_t rows, const T* k, std::int64_t col_begin,
                         std::int64_t cols, std::int64_t d, T scale, bool causal, T* s, std::int64_t ld_s) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t row = row_begin + r;
    const std::int64_t visible = causal ? std::min(cols, std::max<std::int64_t>(0, row - col_begin + 1)) : cols;
    const T* q_row = q + row * d;
    T* s_row = s + r * ld_s;
    for (std::int64_t c = 0; c < visible; ++c) s_row[c] = scale * dot(q_row, k + (col_begin + c) * d, d);
    for (std::int64_t c = visible; c < cols; ++c) s_row[c] = T(-INFINITY);
  }
}

// Largest of the row's scores (-inf when all are masked).
template <typename T>
inline T row_max(const T* s, std::int64_t cols) {
  T m = T(-INFINITY);
  for (std::int64_t c = 0; c < cols; ++c) m = s[c] > m ? s[c] : m;
  return m;
}

// p[c] = exp(s[c] - m) in place; returns the sum. exp(-inf - m) = 0 for masked keys; a fully masked row (m = -inf)
// becomes all zeros with sum 0.
template <typename T>
inline T exp_shifted_in_place(T* s, std::int64_t cols, T m) {
  if (m == T(-INFINITY)) {
    for (std::int64_t c = 0; c < cols; ++c) s[c] = 0;
    return 0;
  }
  T sum = 0;
  for (std::int64_t c = 0; c < cols; ++c) {
    s[c] = std::exp(s[c] - m);
    sum += s[c];
  }
  return sum;
}

// o[0..d) += sum_c p[c] * v_(col_begin + c): one output row gathers value rows weighted by probabilities.
template <typename T>
inline void accumulate_weighted_values(const T* p, std::int64_t cols, const T* v_rows, std::int64_t d, T* o) {
  for (std::int64_t c = 0; c < cols; ++c) {
    const T weight = p[c];
    if (weight == T(0)) continue;  // masked keys: skip the row of V
    const T* v_row = v_rows + c * d;
    for (std::int64_t e = 0; e < d; ++e) o[e] += weight * v_row[e];
  }
}

template <typename T>
inline void scale_row(T* x, std::int64_t count, T factor) {
  for (std::int64_t e = 0; e < count; ++e) x[e] *= factor;
}

}  // namespace dlsys::attention::detail
