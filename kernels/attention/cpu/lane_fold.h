#pragma once
// The tiled kernel's vector fold, the one the lessons measure (fp32, no trace): the plain fold's arithmetic
// (plain_fold.h) on 16 queries per vector with AVX-512, through the register blocks standard attention uses too
// (query_lanes.h). The worker's Q_i block and its O_i accumulator are held transposed in its scratch, as a GPU holds
// them on chip, so a tile's scores, each query's running m and l, and the output rescale are whole-vector operations:
//   S^T = scale K_j Q_i^T               (bc x br' scores, the causal mask on tiles that cross the diagonal)
//   m~ = max over keys (taken as the scores leave the registers, on a tile the mask crosses after masking),
//   P~ = exp(S - m~), l~ = sum of P~ over keys, per query lane (line 10)
//   m_new, alpha = exp(m - m_new), beta = exp(m~ - m_new), l_new = alpha l + beta l~ (line 11, merge_factors)
//   O^T <- alpha O^T + V_j^T (beta P~)^T  (FlashAttention-2), or (l alpha O^T + V_j^T (beta P~)^T) / l_new (line 12)
// Scratch (flash_tile_scratch_elements): with br' = br padded to 16, S^T (bc x br'), Q_i^T and O_i^T (d x br' each),
// m and l (br' each). Pad lanes hold zero queries: their numbers are finite and never written out.
#include "kernels/attention/attention.h"
#include "kernels/attention/cpu/query_lanes.h"

namespace dlsys::attention {

class LaneFold {
 public:
  LaneFold(const Problem& p, const Tiling& t, const float* q, const float* k, const float* v, float* o,
           float* tile_scratch, const TileTrace*)
      : p_(p),
        t_(t),
        q_(q),
        k_(k),
        v_(v),
        o_(o),
        ld_(cpu_padded_rows(t.br)),
        st_(tile_scratch),      // st: (bc, br') S^T, then beta P~^T
        qt_(st_ + t.bc * ld_),  // qt: (d, br') Q_i^T, zero in the pad lanes
        ot_(qt_ + p.d * ld_),   // ot: (d, br') O_i^T
        m_(ot_ + p.d * ld_),    // m: (br') running max
        l_(m_ + ld_) {}         // l: (br') running sum

  void begin_q_block(std::int64_t i) {
    load_queries(i);
    std::fill(ot_, ot_ + p_.d * ld_, 0.0f);
    std::fill(m_, m_ + ld_, -INFINITY);
    std::fill(l_, l_ + ld_, 0.0f);
  }
  void end_q_block(std::int64_t i) {
    const std::int64_t rows = rows_in_block(p_.n, t_, i);
    for (std::int64_t r = 0; r < rows; ++r) l_[r] = 1.0f / l_[r];
    lanes::unpack_transposed(ot_, ld_, l_, rows, p_.d, o_ + i * t_.br * p_.d);
  }

  void load_block(std::int64_t i, const float* m_all, const float* l_all) {
    const std::int64_t rows = rows_in_block(p_.n, t_, i), row_begin = i * t_.br;
    load_queries(i);
    lanes::pack_transposed(o_ + row_begin * p_.d, rows, p_.d, ot_, ld_);
    std::fill(m_, m_ + ld_, -INFINITY);
    std::fill(l_, l_ + ld_, 0.0f);
    std::copy(m_all + row_begin, m_all + row_begin + rows, m_);
    std::copy(l_all + row_begin, l_all + row_begin + rows, l_);
  }
  void store_block(std::int64_t i, float* m_all, float* l_all) const {
    const std::int64_t rows = rows_in_block(p_.n, t_, i), row_begin = i * t_.br;
    lanes::unpack_transposed(ot_, ld_, nullptr, rows, p_.d, o_ + row_begin * p_.d);
    std::copy(m_, m_ + rows, m_all + row_begin);
    std::copy(l_, l_ + rows, l_all + row_begin);
  }

  void fold(std::int64_t i, std::int64_t j, bool normalised, const Traffic&) {
    const std::int64_t rows = rows_in_block(p_.n, t_, i), cols = cols_in_block(p_.n, t_, j);
    const std::int64_t row_begin = i * t_.br, col_begin = j * t_.bc;
    const bool crosses_diagonal = p_.causal && col_begin + cols - 1 > row_begin;
    const float* k_j = k_ + col_begin * p_.d;
    const float* v_j = v_ + col_begin * p_.d;
    lanes::for_each_query_group(cpu_padded_rows(rows), [&](auto vecs, std::int64_t r0, std::int64_t) {
      constexpr int V = decltype(vecs)::value;
      float* st = st_ + r0;
      lanes::Vec m_tile[V], keep[V], after[V] = {};
      for (int u = 0; u < V; ++u) m_tile[u] = lanes::minus_infinity();
      if (crosses_diagonal) {
        lanes::scores_group<V>(qt_ + r0, ld_, k_j, cols, p_.d, float(p_.scale), st, ld_, lanes::kFloats);
        lanes::mask_after_diagonal<V>(st, ld_, cols, col_begin, row_begin + r0, lanes::kFloats);
        tile_max<V>(st, cols, m_tile);
        merge_tile<V, true>(st, cols, m_tile, m_ + r0, l_ + r0, normalised, keep, after);
      } else {
        // Fused as a GEMM library cannot: each query's max is taken as its scores leave the registers.
        lanes::scores_group<V>(qt_ + r0, ld_, k_j, cols, p_.d, float(p_.scale), st, ld_, lanes::kFloats, m_tile);
        merge_tile<V, false>(st, cols, m_tile, m_ + r0, l_ + r0, normalised, keep, after);
      }
      // Once the running max stops moving, alpha is exactly 1 for every query and the output only accumulates.
      const lanes::Start start = lanes::all_ones<V>(keep) ? lanes::Start::Add : lanes::Start::Rescale;
      lanes::values_group<V>(st, ld_, cols, v_j, p_.d, start, keep, ot_ + r0, ld_, lanes::kFloats);
      if (normalised)
        for (std::int64_t e = 0; e < p_.d; ++e)
          for (int u = 0; u < V; ++u) {
            float* x = ot_ + e * ld_ + r0 + u * lanes::kFloats;
            simd::store(x, simd::load(x) * after[u]);
          }
    });
  }

 private:
  void load_queries(std::int64_t i) {
    lanes::pack_transposed(q_ + i * t_.br * p_.d, rows_in_block(p_.n, t_, i), p_.d, qt_, ld_);
  }

  // Line 10's max over the tile's keys, for V vectors of queries of its S^T (cols rows of ld_).
  template <int V>
  void tile_max(const float* st, std::int64_t cols, lanes::Vec m_tile[V]) const {
    for (std::int64_t c = 0; c < cols; ++c)
      for (int u = 0; u < V; ++u) {
        const lanes::Vec s = simd::load(st + c * ld_ + u * lanes::kFloats);
        m_tile[u] = simd::select(s > m_tile[u], s, m_tile[u]);
      }
  }

  // Lines 10-11 for V vectors of queries of the tile's S^T, given its max m_tile: m and l updated in place, S^T
  // replaced by beta P~^T, and the factors for the output: O^T <- keep O^T + V_j^T (beta P~)^T, then O^T *= after
  // (FlashAttention-2: keep = alpha; Algorithm 1: keep = l alpha and after = 1 / l_new, 0 while l_new = 0).
  // Masked: whether the causal mask hid any score of the tile.
  template <int V, bool Masked>
  void merge_tile(float* st, std::int64_t cols, const lanes::Vec m_tile[V], float* m, float* l, bool normalised,
                  lanes::Vec keep[V], lanes::Vec after[V]) const {
    using lanes::Vec;
    using simd::select;
    const Vec minus_infinity = lanes::minus_infinity();
    auto at = [&](std::int64_t c, int u) { return st + c * ld_ + u * lanes::kFloats; };
    Vec l_tile[V] = {}, beta[V];
    for (int u = 0; u < V; ++u) {
      const Vec m_old = simd::load(m + u * lanes::kFloats);
      const Vec m_new = select(m_old > m_tile[u], m_old, m_tile[u]);
      keep[u] = select(m_old == minus_infinity, Vec{}, simd::exp_poly(m_old - m_new));  // alpha
      beta[u] = select(m_tile[u] == minus_infinity, Vec{}, simd::exp_poly(m_tile[u] - m_new));
      simd::store(m + u * lanes::kFloats, m_new);
    }
    for (std::int64_t c = 0; c < cols; ++c)
      for (int u = 0; u < V; ++u) {
        const Vec p = lanes::exp_shifted<Masked>(simd::load(at(c, u)), m_tile[u]);
        l_tile[u] += p;
        simd::store(at(c, u), p * beta[u]);
      }
    for (int u = 0; u < V; ++u) {
      const Vec l_old = simd::load(l + u * lanes::kFloats);
      const Vec l_new = keep[u] * l_old + beta[u] * l_tile[u];
      simd::store(l + u * lanes::kFloats, l_new);
      if (normalised) {
        after[u] = select(l_new > Vec{}, 1.0f / l_new, Vec{});
        keep[u] = l_old * keep[u];
      }
    }
  }

  const Problem& p_;
  const Tiling& t_;
  const float *q_, *k_, *v_;
  float* o_;
  std::int64_t ld_;
  float *st_, *qt_, *ot_, *m_, *l_;
};

}  // namespace dlsys::attention
