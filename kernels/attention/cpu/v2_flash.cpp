// v2_flash: tiled attention with the online softmax (FlashAttention), in both loop orders.
// A tile's scores exist only in a br x bc buffer per worker. Folding a tile into a row keeps three things per row:
// the running max m, the running sum l of exp(s - m), and the output accumulated so far; a new tile with max m_tile
// and sum l_tile is merged by rescaling both sides to m_new = max(m, m_tile): the old side by exp(m - m_new), the
// tile by exp(m_tile - m_new). Nothing is approximated, so the result equals softmax(S) V up to fp rounding.
// Here the CPU's caches play the part of the GPU's SRAM; the tile sizes come from the same Algorithm 1 formulas.
#include <mutex>
#include <stdexcept>

#include "engine/parallel.h"
#include "kernels/attention/attention.h"
#include "kernels/attention/cpu/block_ops.h"

namespace dlsys::attention {

namespace {

template <typename T>
class TiledAttention {
 public:
  TiledAttention(const Problem& p, const Tiling& t, const T* q, const T* k, const T* v, T* o, const TileTrace* trace)
      : p_(p), t_(t), q_(q), k_(k), v_(v), o_(o), trace_(trace), tr_(row_blocks(p.n, t)), tc_(col_blocks(p.n, t)) {}

  // FlashAttention-2's order: one Q block at a time; its m, l and unnormalised output stay with the worker until
  // every K/V block has been folded in, then the output is divided by l once.
  void run_q_outer(std::int64_t worker, std::int64_t workers, T* tile_scratch, Traffic& traffic) const {
    T* s = tile_scratch;       // s: (br, bc) scores, then probabilities
    T* m = s + t_.br * t_.bc;  // m: (br) running max
    T* l = m + t_.br;          // l: (br) running sum
    for (std::int64_t i = worker; i < tr_; i += workers) {
      const std::int64_t rows = rows_in_block(p_.n, t_, i);
      T* o_i = o_ + i * t_.br * p_.d;
      for (std::int64_t e = 0; e < rows * p_.d; ++e) o_i[e] = 0;
      for (std::int64_t r = 0; r < rows; ++r) m[r] = T(-INFINITY), l[r] = 0;
      traffic.read_elements += double(rows * p_.d);  // Q_i
      for (std::int64_t j = 0; j < tc_; ++j) {
        if (!tile_needed(p_.n, t_, p_.causal, i, j)) continue;
        traffic.read_elements += 2.0 * double(cols_in_block(p_.n, t_, j) * p_.d);  // K_j, V_j
        fold_tile(i, j, s, m, l, o_i, /*normalised=*/false, traffic);
      }
      for (std::int64_t r = 0; r < rows; ++r) detail::scale_row(o_i + r * p_.d, p_.d, T(1) / l[r]);
      traffic.write_elements += double(rows * p_.d);  // O_i
    }
  }

  // Algorithm 1's order: K/V blocks outside, Q blocks inside. Every tile loads O_i, l_i, m_i from main memory and
  // stores them back, O_i normalised by the new l each time (line 12).
  void run_kv_outer(std::int64_t worker, std::int64_t workers, T* tile_scratch, T* m_all, T* l_all,
                    Traffic& traffic) const {
    T* s = tile_scratch;                                    // s: (br, bc)
    T* m = s + t_.br * t_.bc;                               // m: (br) m_i loaded for this tile
    T* l = m + t_.br;                                       // l: (br) l_i loaded for this tile
    for (std::int64_t i = worker; i < tr_; i += workers) {  // line 2: O = 0, l = 0, m = -inf in main memory
      const std::int64_t rows = rows_in_block(p_.n, t_, i), row_begin = i * t_.br;
      for (std::int64_t e = 0; e < rows * p_.d; ++e) o_[row_begin * p_.d + e] = 0;
      for (std::int64_t r = 0; r < rows; ++r) m_all[row_begin + r] = T(-INFINITY), l_all[row_begin + r] = 0;
      traffic.write_elements += double(rows * (p_.d + 2));
    }
    for (std::int64_t j = 0; j < tc_; ++j) {
      bool kv_loaded = false;
      for (std::int64_t i = worker; i < tr_; i += workers) {
        if (!tile_needed(p_.n, t_, p_.causal, i, j)) continue;
        if (!kv_loaded) traffic.read_elements += 2.0 * double(cols_in_block(p_.n, t_, j) * p_.d);  // line 6
        kv_loaded = true;
        const std::int64_t rows = rows_in_block(p_.n, t_, i), row_begin = i * t_.br;
        for (std::int64_t r = 0; r < rows; ++r) m[r] = m_all[row_begin + r], l[r] = l_all[row_begin + r];
        traffic.read_elements += double(rows * (2 * p_.d + 2));  // line 8: Q_i, O_i, l_i, m_i
        traffic.write_elements += double(rows * (p_.d + 2));     // lines 12-13: O_i, l_i, m_i (stored just below)
        fold_tile(i, j, s, m, l, o_ + row_begin * p_.d, /*normalised=*/true, traffic);
        for (std::int64_t r = 0; r < rows; ++r) m_all[row_begin + r] = m[r], l_all[row_begin + r] = l[r];
      }
    }
  }

 private:
  // Folds tile (i, j) into the rows of Q block i: m and l (br) are updated in place, o_i (rows, d) holds either the
  // normalised output (Algorithm 1) or the unnormalised weighted sum z (FlashAttention-2, section 11.1 of the course).
  void fold_tile(std::int64_t i, std::int64_t j, T* s, T* m, T* l, T* o_i, bool normalised,
                 const Traffic& traffic) const {
    const std::int64_t rows = rows_in_block(p_.n, t_, i), cols = cols_in_block(p_.n, t_, j);
    const std::int64_t row_begin = i * t_.br, col_begin = j * t_.bc;
    // Line 9 with the scale Algorithm 1 leaves out: S_ij = scale Q_i K_j^T.
    detail::scores_block(q_, row_begin, rows, k_, col_begin, cols, p_.d, T(p_.scale), p_.causal, s, t_.bc);
    TileRecord record;
    if (trace_ != nullptr) record = begin_record(i, j, s);
    const T* v_j = v_ + col_begin * p_.d;
    for (std::int64_t r = 0; r < rows; ++r) {
      T* s_row = s + r * t_.bc;
      T* o_row = o_i + r * p_.d;
      const T m_tile = detail::row_max(s_row, cols);                        // line 10
      const T l_tile = detail::exp_shifted_in_place(s_row, cols, m_tile);   // P~ = exp(S - m~), l~ = rowsum(P~)
      const MergeFactors<T> f = merge_factors(m[r], l[r], m_tile, l_tile);  // line 11
      if (normalised) {
        // Line 12: O_i <- (l alpha O_i + beta P~ V_j) / l_new. A row with no visible key yet has l_new = 0 and stays 0.
        if (f.l_new > T(0)) {
          detail::scale_row(o_row, p_.d, l[r] * f.alpha / f.l_new);
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
        record.row_states[r] = {double(m[r]),    double(l[r]),    double(m_tile),  double(l_tile),
                                double(f.m_new), double(f.l_new), double(f.alpha), double(f.beta)};
      m[r] = f.m_new;  // line 13
      l[r] = f.l_new;
    }
    if (trace_ != nullptr) {
      record.output.assign(o_i, o_i + rows * p_.d);
      record.output_normalised = normalised;
      record.order = normalised ? LoopOrder::KvOuter : LoopOrder::QOuter;
      record.traffic_so_far = traffic;
      (*trace_)(record);
    }
  }

  TileRecord begin_record(std::int64_t i, std::int64_t j, const T* s) const {
    TileRecord record;
    record.i = i;
    record.j = j;
    record.row_begin = i * t_.br;
    record.rows = rows_in_block(p_.n, t_, i);
    record.col_begin = j * t_.bc;
    record.cols = cols_in_block(p_.n, t_, j);
    record.d = p_.d;
    for (std::int64_t r = 0; r < record.rows; ++r)
      for (std::int64_t c = 0; c < record.cols; ++c) record.scores.push_back(double(s[r * t_.bc + c]));
    record.row_states.resize(static_cast<std::size_t>(record.rows));
    return record;
  }

  const Problem& p_;
  const Tiling& t_;
  const T *q_, *k_, *v_;
  T* o_;
  const TileTrace* trace_;
  std::int64_t tr_, tc_;
};

}  // namespace

template <typename T>
void v2_flash(const Problem& p, const Tiling& t, LoopOrder order, const T* q, const T* k, const T* v, T* o,
              std::span<T> scratch, int threads, const TileTrace* trace, Traffic* counted) {
  if (p.n < 1 || p.d < 1 || t.br < 1 || t.bc < 1) throw std::invalid_argument("v2_flash: n, d, br, bc must be >= 1");
  if (trace != nullptr) threads = 1;  // trace calls arrive in loop order
  if (counted != nullptr) *counted = {};
  const std::int64_t workers = flash_workers(p.n, t, threads);
  if (std::int64_t(scratch.size()) < flash_scratch_elements(p.n, t, order, workers))
    throw std::invalid_argument("v2_flash: scratch smaller than flash_scratch_elements");
  const std::int64_t tile_elements = flash_tile_scratch_elements(t);
  T* m_all = scratch.data() + workers * tile_elements;  // KvOuter only: m (n), l (n) in main memory
  T* l_all = m_all + p.n;
  TiledAttention<T> kernel(p, t, q, k, v, o, trace);
  std::mutex traffic_mutex;
  parallel_for(workers, int(workers), [&](std::int64_t worker_begin, std::int64_t worker_end) {
    for (std::int64_t w = worker_begin; w < worker_end; ++w) {
      Traffic traffic;
      T* tile_scratch = scratch.data() + w * tile_elements;
      if (order == LoopOrder::QOuter)
        kernel.run_q_outer(w, workers, tile_scratch, traffic);
      else
        kernel.run_kv_outer(w, workers, tile_scratch, m_all, l_all, traffic);
      if (counted != nullptr) {
        std::lock_guard lock(traffic_mutex);
        counted->read_elements += traffic.read_elements;
        counted->write_elements += traffic.write_elements;
      }
    }
  });
}

template void v2_flash<float>(const Problem&, const Tiling&, LoopOrder, const float*, const float*, const float*,
                              float*, std::span<float>, int, const TileTrace*, Traffic*);
template void v2_flash<double>(const Problem&, const Tiling&, LoopOrder, const double*, const double*, const double*,
                               double*, std::span<double>, int, const TileTrace*, Traffic*);

}  // namespace dlsys::attention
