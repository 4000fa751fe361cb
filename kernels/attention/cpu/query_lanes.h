#pragma once
// The vector inner loops of both measured CPU attention kernels (v1_naive, and v2_flash when it runs untraced in
// fp32), so the two differ only in what they keep in memory: the same register blocks make the scores, the same
// exponential makes the probabilities, the same register blocks make the output.
//
// The vector lanes run over QUERIES. q and k are row-major with the head dimension contiguous, so a dot product per
// score would end in a sum across the lanes of a vector; instead a block of queries is copied transposed once into a
// panel (qt[l * ld + r] = q_r[l], rows padded to whole vectors with zeros), and then
//   S^T = K Q^T  multiplies a broadcast element of a key by a row of the panel: one vector of scores per key,
//   softmax      of each query runs down a column of S^T: its max and its sum are taken across vectors, never within
//                one, so each of a vector's queries keeps its own statistics in its own lane,
//   O^T += V^T P^T multiplies a broadcast element of a value row by a row of P^T.
// Each register block keeps kBlockKeys x kBlockVecs vectors of sums in registers for its whole loop (over d for the
// scores, over the keys for the output), so a vector loaded from memory serves kBlockKeys multiply-adds.
// Include only from kernels/*/cpu sources: simd.h is compiled for this machine's vector width there.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/common/simd.h"

namespace dlsys::attention::lanes {

using simd::kFloats;
using simd::Vec;

#if defined(__AVX512F__)  // 32 vector registers: 8 x 3 sums, 3 operands, a broadcast
inline constexpr int kBlockKeys = 8;
inline constexpr int kBlockVecs = 3;
#else  // 16 vector registers: 6 x 2 sums
inline constexpr int kBlockKeys = 6;
inline constexpr int kBlockVecs = 2;
#endif
// Queries one register block covers: 48 with AVX-512.
inline constexpr std::int64_t kGroupQueries = std::int64_t(kBlockVecs) * kFloats;

inline Vec minus_infinity() { return simd::splat(-INFINITY); }

// The first `lanes` floats at p (all kFloats when lanes >= kFloats); the rest of the vector is zero. Only the last
// vector of a block whose query count is not a multiple of kFloats is partial.
inline Vec load_lanes(const float* p, std::int64_t lanes) {
  if (lanes >= kFloats) return simd::load(p);
  Vec v{};
  std::memcpy(&v, p, sizeof(float) * std::size_t(lanes));
  return v;
}
inline void store_lanes(float* p, Vec v, std::int64_t lanes) {
  if (lanes >= kFloats) return simd::store(p, v);
  std::memcpy(p, &v, sizeof(float) * std::size_t(lanes));
}

// exp(s - m). Masked: whether s may be -inf (a key the causal mask hides, or every key of a query that sees none
// yet, where m is -inf too and s - m would be NaN); those give exactly 0. Without a mask every s is finite.
template <bool Masked>
inline Vec exp_shifted(Vec s, Vec m) {
  if constexpr (Masked) return simd::select(s == minus_infinity(), Vec{}, simd::exp_poly(s - m));
  return simd::exp_poly(s - m);
}

// The query panel of rows x[0..rows) of a row-major (rows, d) block: panel[l * ld + r] = x[r * d + l], and zero in the
// pad lanes rows <= r < ld (ld a multiple of kFloats).
inline void pack_transposed(const float* x, std::int64_t rows, std::int64_t d, float* panel, std::int64_t ld) {
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t l = 0; l < d; ++l) panel[l * ld + r] = x[r * d + l];
  for (std::int64_t l = 0; l < d; ++l)
    for (std::int64_t r = rows; r < ld; ++r) panel[l * ld + r] = 0;
}

// The way back: x[r * d + e] = panel[e * ld + r] * factor[r] for r < rows (factor null: 1).
inline void unpack_transposed(const float* panel, std::int64_t ld, const float* factor, std::int64_t rows,
                              std::int64_t d, float* x) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const float f = factor != nullptr ? factor[r] : 1.0f;
    for (std::int64_t e = 0; e < d; ++e) x[r * d + e] = factor != nullptr ? panel[e * ld + r] * f : panel[e * ld + r];
  }
}

// Calls body(std::integral_constant<int, V>{}, r0, lanes_last) for each register block of queries [r0, r0 + 48)
// (with AVX-512) covering [0, rows): V vectors, the last of them with lanes_last queries.
template <int V = kBlockVecs, typename Body>
inline void with_vecs(std::int64_t vecs, Body& body) {
  if constexpr (V > 1) {
    if (vecs < V) return with_vecs<V - 1>(vecs, body);
  }
  body(std::integral_constant<int, V>{});
}
template <typename Body>
inline void for_each_query_group(std::int64_t rows, Body&& body) {
  for (std::int64_t r0 = 0; r0 < rows; r0 += kGroupQueries) {
    const std::int64_t queries = std::min(kGroupQueries, rows - r0);
    const std::int64_t vecs = (queries + kFloats - 1) / kFloats;
    const std::int64_t lanes_last = queries - (vecs - 1) * kFloats;
    auto at_width = [&](auto v) { body(v, r0, lanes_last); };
    with_vecs(vecs, at_width);
  }
}

// C keys by V query vectors: st[c * ld_s + r] = scale * sum_l k[c * d + l] qt[l * ld_q + r], and running_max[v]
// (when given) raised to each query's largest score. Partial: whether the last vector has fewer than kFloats queries
// (a compile-time choice keeps the test out of the full blocks' loops).
template <int C, int V, bool Partial>
inline void scores_block(const float* qt, std::int64_t ld_q, const float* k, std::int64_t d, float scale, float* st,
                         std::int64_t ld_s, std::int64_t lanes_last, Vec* running_max) {
  Vec acc[C][V] = {};
  for (std::int64_t l = 0; l < d; ++l) {
    Vec q[V];
    for (int v = 0; v < V; ++v) q[v] = simd::load(qt + l * ld_q + v * kFloats);
    for (int c = 0; c < C; ++c) {
      const Vec key = simd::splat(k[c * d + l]);
      for (int v = 0; v < V; ++v) acc[c][v] += key * q[v];
    }
  }
  for (int c = 0; c < C; ++c)
    for (int v = 0; v < V; ++v) {
      const Vec score = scale * acc[c][v];
      store_lanes(st + c * ld_s + v * kFloats, score, Partial && v == V - 1 ? lanes_last : kFloats);
      if (running_max != nullptr) running_max[v] = simd::select(score > running_max[v], score, running_max[v]);
    }
}

// S^T for one group of V query vectors against keys [0, cols) (k: (cols, d) row-major): st[c * ld_s + r] =
// scale * k_c . q_r. The panel qt holds whole vectors (its pad lanes are zero); st gets lanes_last queries in its
// last vector.
template <int V, bool Partial>
inline void scores_group_of(const float* qt, std::int64_t ld_q, const float* k, std::int64_t cols, std::int64_t d,
                            float scale, float* st, std::int64_t ld_s, std::int64_t lanes_last, Vec* running_max) {
  std::int64_t c = 0;
  for (; c + kBlockKeys <= cols; c += kBlockKeys)
    scores_block<kBlockKeys, V, Partial>(qt, ld_q, k + c * d, d, scale, st + c * ld_s, ld_s, lanes_last, running_max);
  for (; c < cols; ++c)
    scores_block<1, V, Partial>(qt, ld_q, k + c * d, d, scale, st + c * ld_s, ld_s, lanes_last, running_max);
}
// running_max (V vectors, optional): raised to each query's largest score of these keys, as they leave the registers.
template <int V>
inline void scores_group(const float* qt, std::int64_t ld_q, const float* k, std::int64_t cols, std::int64_t d,
                         float scale, float* st, std::int64_t ld_s, std::int64_t lanes_last,
                         Vec* running_max = nullptr) {
  if (lanes_last >= kFloats)
    return scores_group_of<V, false>(qt, ld_q, k, cols, d, scale, st, ld_s, lanes_last, running_max);
  scores_group_of<V, true>(qt, ld_q, k, cols, d, scale, st, ld_s, lanes_last, running_max);
}

// Where a block of output sums starts: at zero, at what the output holds, or at that times a factor per query.
enum class Start { Zero, Add, Rescale };

// E value columns by V query vectors: ot[e * ld_o + r] = start + sum_c v[c * d + e] pt[c * ld_p + r], with start 0,
// ot[e * ld_o + r] or keep[r] ot[e * ld_o + r]. Partial as in scores_block.
template <int E, int V, bool Partial>
inline void values_block(const float* pt, std::int64_t ld_p, std::int64_t cols, const float* v_rows, std::int64_t d,
                         Start start, const Vec* keep, float* ot, std::int64_t ld_o, std::int64_t lanes_last) {
  Vec acc[E][V];
  for (int e = 0; e < E; ++e)
    for (int v = 0; v < V; ++v) {
      acc[e][v] = start == Start::Zero ? Vec{} : simd::load(ot + e * ld_o + v * kFloats);
      if (start == Start::Rescale) acc[e][v] *= keep[v];
    }
  for (std::int64_t c = 0; c < cols; ++c) {
    Vec p[V];
    for (int v = 0; v < V; ++v)
      p[v] = load_lanes(pt + c * ld_p + v * kFloats, Partial && v == V - 1 ? lanes_last : kFloats);
    for (int e = 0; e < E; ++e) {
      const Vec value = simd::splat(v_rows[c * d + e]);
      for (int v = 0; v < V; ++v) acc[e][v] += value * p[v];
    }
  }
  for (int e = 0; e < E; ++e)
    for (int v = 0; v < V; ++v) simd::store(ot + e * ld_o + v * kFloats, acc[e][v]);
}

// O^T for one group of V query vectors: ot (d rows of ld_o, whole vectors) = start + V^T P^T over keys [0, cols),
// with v: (cols, d) row-major and P^T's rows ld_p apart (lanes_last queries valid in its last vector).
template <int V, bool Partial>
inline void values_group_of(const float* pt, std::int64_t ld_p, std::int64_t cols, const float* v_rows, std::int64_t d,
                            Start start, const Vec* keep, float* ot, std::int64_t ld_o, std::int64_t lanes_last) {
  std::int64_t e = 0;
  for (; e + kBlockKeys <= d; e += kBlockKeys)
    values_block<kBlockKeys, V, Partial>(pt, ld_p, cols, v_rows + e, d, start, keep, ot + e * ld_o, ld_o, lanes_last);
  for (; e < d; ++e)
    values_block<1, V, Partial>(pt, ld_p, cols, v_rows + e, d, start, keep, ot + e * ld_o, ld_o, lanes_last);
}
template <int V>
inline void values_group(const float* pt, std::int64_t ld_p, std::int64_t cols, const float* v_rows, std::int64_t d,
                         Start start, const Vec* keep, float* ot, std::int64_t ld_o, std::int64_t lanes_last) {
  if (lanes_last >= kFloats)
    return values_group_of<V, false>(pt, ld_p, cols, v_rows, d, start, keep, ot, ld_o, lanes_last);
  values_group_of<V, true>(pt, ld_p, cols, v_rows, d, start, keep, ot, ld_o, lanes_last);
}

// Whether every lane of the V vectors is exactly 1 (a rescale by them would change nothing).
template <int V>
inline bool all_ones(const Vec x[V]) {
  for (int v = 0; v < V; ++v)
    for (int t = 0; t < kFloats; ++t)
      if (x[v][t] != 1.0f) return false;
  return true;
}

// The causal mask on one group of S^T: -inf where key col_begin + c comes after query row_begin + r.
template <int V>
inline void mask_after_diagonal(float* st, std::int64_t ld_s, std::int64_t cols, std::int64_t col_begin,
                                std::int64_t row_begin, std::int64_t lanes_last) {
  simd::IVec lane{};
  for (int t = 0; t < kFloats; ++t) lane[t] = t;
  for (std::int64_t c = std::max<std::int64_t>(0, row_begin + 1 - col_begin); c < cols; ++c)
    for (int v = 0; v < V; ++v) {
      // Rows and columns fit in int32: the lessons cap n at 2^20.
      const simd::IVec row = lane + std::int32_t(row_begin + v * kFloats);
      const std::int64_t lanes = v == V - 1 ? lanes_last : kFloats;
      float* s = st + c * ld_s + v * kFloats;
      store_lanes(s, simd::select(row < std::int32_t(col_begin + c), minus_infinity(), load_lanes(s, lanes)), lanes);
    }
}

}  // namespace dlsys::attention::lanes
