#pragma once
// The plain inner loops of the tiled kernel's plain fold (plain_fold.h: traced runs and the double worked example),
// one row of a tile at a time, in any element type. The measured fp32 kernels use query_lanes.h instead.
#include <algorithm>
#include <cmath>
#include <cstdint>

namespace dlsys::attention::detail {

// Four dot products q . k0, q . k1, q . k2, q . k3 over d elements at once: each load of q serves four keys, and
// sixteen independent partial sums per key let the compiler use vector lanes without reordering a single serial sum
// (which it may not do for floats without -ffast-math).
template <typename T>
inline void dot4(const T* __restrict q, const T* __restrict k0, const T* __restrict k1, const T* __restrict k2,
                 const T* __restrict k3, std::int64_t d, T out[4]) {
  constexpr int kLanes = 16;
  T a0[kLanes] = {}, a1[kLanes] = {}, a2[kLanes] = {}, a3[kLanes] = {};
  std::int64_t l = 0;
  for (; l + kLanes <= d; l += kLanes)
    for (int t = 0; t < kLanes; ++t) {
      const T x = q[l + t];
      a0[t] += x * k0[l + t];
      a1[t] += x * k1[l + t];
      a2[t] += x * k2[l + t];
      a3[t] += x * k3[l + t];
    }
  for (int t = 1; t < kLanes; ++t) a0[0] += a0[t], a1[0] += a1[t], a2[0] += a2[t], a3[0] += a3[t];
  for (; l < d; ++l) a0[0] += q[l] * k0[l], a1[0] += q[l] * k1[l], a2[0] += q[l] * k2[l], a3[0] += q[l] * k3[l];
  out[0] = a0[0], out[1] = a1[0], out[2] = a2[0], out[3] = a3[0];
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
    const T* k_block = k + col_begin * d;
    T* s_row = s + r * ld_s;
    T dots[4];
    std::int64_t c = 0;
    for (; c + 4 <= visible; c += 4) {
      dot4(q_row, k_block + c * d, k_block + (c + 1) * d, k_block + (c + 2) * d, k_block + (c + 3) * d, d, dots);
      for (int u = 0; u < 4; ++u) s_row[c + u] = scale * dots[u];
    }
    for (; c < visible; ++c) {  // the last few keys: the same sums, with three dummy keys (the row itself)
      dot4(q_row, k_block + c * d, k_block + c * d, k_block + c * d, k_block + c * d, d, dots);
      s_row[c] = scale * dots[0];
    }
    for (; c < cols; ++c) s_row[c] = T(-INFINITY);
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

// o[0..d) += sum_c p[c] * v_c (v_c the rows of v_rows, d apart): one output row gathers value rows weighted by
// probabilities. The row is done in chunks of 64 held in a local accumulator the compiler keeps in vector registers
// for the whole sweep over c, instead of loading and storing o for every value row.
template <typename T>
inline void accumulate_weighted_values(const T* __restrict p, std::int64_t cols, const T* __restrict v_rows,
                                       std::int64_t d, T* __restrict o) {
  constexpr std::int64_t kChunk = 64;
  std::int64_t e0 = 0;
  for (; e0 + kChunk <= d; e0 += kChunk) {
    T acc[kChunk];
    for (std::int64_t e = 0; e < kChunk; ++e) acc[e] = o[e0 + e];
    for (std::int64_t c = 0; c < cols; ++c) {
      const T weight = p[c];
      const T* v_row = v_rows + c * d + e0;
      for (std::int64_t e = 0; e < kChunk; ++e) acc[e] += weight * v_row[e];
    }
    for (std::int64_t e = 0; e < kChunk; ++e) o[e0 + e] = acc[e];
  }
  if (e0 == d) return;
  for (std::int64_t c = 0; c < cols; ++c) {  // the last d % 64 columns
    const T weight = p[c];
    const T* v_row = v_rows + c * d;
    for (std::int64_t e = e0; e < d; ++e) o[e] += weight * v_row[e];
  }
}

template <typename T>
inline void scale_row(T* x, std::int64_t count, T factor) {
  for (std::int64_t e = 0; e < count; ++e) x[e] *= factor;
}

}  // namespace dlsys::attention::detail
