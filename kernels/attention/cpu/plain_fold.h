#pragma once
// The tiled kernel's plain fold: one row of a tile at a time, in the element type T, with every intermediate where the
// trace hook can copy it. It runs the traced runs of the step views (fp32) and the worked example (double); the
// measured fp32 runs take the vector fold (lane_fold.h), which keeps the same m, l, rescale factors and output and
// differs only in the order of its float sums and in its exponential (a polynomial good to 2e-7).
// A fold works for one worker on its own scratch; v2_flash.cpp's loop orders call it.
#include "kernels/attention/attention.h"
#include "kernels/attention/cpu/block_ops.h"

namespace dlsys::attention {

template <typename T>
class PlainFold {
 public:
  PlainFold(const Problem& p, const Tiling& t, const T* q, const T* k, const T* v, T* o, T* tile_scratch,
            const TileTrace* trace)
      : p_(p),
        t_(t),
        q_(q),
        k_(k),
        v_(v),
        o_(o),
        s_(tile_scratch),      // s: (br, bc) scores, then probabilities
        m_(s_ + t.br * t.bc),  // m: (br) running max
        l_(m_ + t.br),         // l: (br) running sum
        trace_(trace) {}

  // FlashAttention-2's order: O_i holds the unnormalised weighted sum z until the block's last tile.
  void begin_q_block(std::int64_t i) {
    const std::int64_t rows = rows_in_block(p_.n, t_, i);
    T* o_i = o_ + i * t_.br * p_.d;
    for (std::int64_t e = 0; e < rows * p_.d; ++e) o_i[e] = 0;
    for (std::int64_t r = 0; r < rows; ++r) m_[r] = T(-INFINITY), l_[r] = 0;
  }
  void end_q_block(std::int64_t i) {
    T* o_i = o_ + i * t_.br * p_.d;
    for (std::int64_t r = 0; r < rows_in_block(p_.n, t_, i); ++r) detail::scale_row(o_i + r * p_.d, p_.d, T(1) / l_[r]);
  }

  // Algorithm 1's order: m_i and l_i come from main memory for every tile and go back after it; O_i stays there.
  void load_block(std::int64_t i, const T* m_all, const T* l_all) {
    const std::int64_t row_begin = i * t_.br;
    for (std::int64_t r = 0; r < rows_in_block(p_.n, t_, i); ++r)
      m_[r] = m_all[row_begin + r], l_[r] = l_all[row_begin + r];
  }
  void store_block(std::int64_t i, T* m_all, T* l_all) const {
    const std::int64_t row_begin = i * t_.br;
    for (std::int64_t r = 0; r < rows_in_block(p_.n, t_, i); ++r)
      m_all[row_begin + r] = m_[r], l_all[row_begin + r] = l_[r];
  }

  // Folds tile (i, j) into the rows of Q block i: m and l are updated in place, O_i (rows, d) holds either the
  // normalised output (Algorithm 1) or the unnormalised weighted sum z (FlashAttention-2, section 11.1 of the course).
  void fold(std::int64_t i, std::int64_t j, bool normalised, const Traffic& traffic) {
    const std::int64_t rows = rows_in_block(p_.n, t_, i), cols = cols_in_block(p_.n, t_, j);
    const std::int64_t row_begin = i * t_.br, col_begin = j * t_.bc;
    // Line 9 with the scale Algorithm 1 leaves out: S_ij = scale Q_i K_j^T.
    detail::scores_block(q_, row_begin, rows, k_, col_begin, cols, p_.d, T(p_.scale), p_.causal, s_, t_.bc);
    TileRecord record;
    if (trace_ != nullptr) record = begin_record(i, j);
    const T* v_j = v_ + col_begin * p_.d;
    T* o_i = o_ + row_begin * p_.d;
    for (std::int64_t r = 0; r < rows; ++r) {
      T* s_row = s_ + r * t_.bc;
      T* o_row = o_i + r * p_.d;
      const T m_tile = detail::row_max(s_row, cols);                          // line 10
      const T l_tile = detail::exp_shifted_in_place(s_row, cols, m_tile);     // P~ = exp(S - m~), l~ = rowsum(P~)
      const MergeFactors<T> f = merge_factors(m_[r], l_[r], m_tile, l_tile);  // line 11
      if (normalised) {
        // Line 12: O_i <- (l alpha O_i + beta P~ V_j) / l_new. A row with no visible key yet has l_new = 0 and stays 0.
        if (f.l_new > T(0)) {
          detail::scale_row(o_row, p_.d, l_[r] * f.alpha / f.l_new);
          detail::scale_row(s_row, cols, f.beta / f.l_new);
          detail::accumulate_weighted_values(s_row, cols, v_j, p_.d, o_row);
        }
      } else {
        // z <- alpha z + beta P~ V_j; divided by l after the last tile.
        if (f.alpha != T(1)) detail::scale_row(o_row, p_.d, f.alpha);
        if (f.beta != T(1)) detail::scale_row(s_row, cols, f.beta);
        detail::accumulate_weighted_values(s_row, cols, v_j, p_.d, o_row);
      }
      if (trace_ != nullptr)
        record.row_states[r] = {double(m_[r]),   double(l_[r]),   double(m_tile),  double(l_tile),
                                double(f.m_new), double(f.l_new), double(f.alpha), double(f.beta)};
      m_[r] = f.m_new;  // line 13
      l_[r] = f.l_new;
    }
    if (trace_ != nullptr) {
      record.output.assign(o_i, o_i + rows * p_.d);
      record.output_normalised = normalised;
      record.order = normalised ? LoopOrder::KvOuter : LoopOrder::QOuter;
      record.traffic_so_far = traffic;
      (*trace_)(record);
    }
  }

 private:
  TileRecord begin_record(std::int64_t i, std::int64_t j) const {
    TileRecord record;
    record.i = i;
    record.j = j;
    record.row_begin = i * t_.br;
    record.rows = rows_in_block(p_.n, t_, i);
    record.col_begin = j * t_.bc;
    record.cols = cols_in_block(p_.n, t_, j);
    record.d = p_.d;
    for (std::int64_t r = 0; r < record.rows; ++r)
      for (std::int64_t c = 0; c < record.cols; ++c) record.scores.push_back(double(s_[r * t_.bc + c]));
    record.row_states.resize(static_cast<std::size_t>(record.rows));
    return record;
  }

  const Problem& p_;
  const Tiling& t_;
  const T *q_, *k_, *v_;
  T* o_;
  T *s_, *m_, *l_;
  const TileTrace* trace_;
};

}  // namespace dlsys::attention
