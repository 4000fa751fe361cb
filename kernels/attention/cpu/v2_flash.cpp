// v2_flash: tiled attention with the online softmax (FlashAttention), in both loop orders.
// A tile's scores exist only in a br x bc buffer per worker. Folding a tile into a row keeps three things per row:
// the running max m, the running sum l of exp(s - m), and the output accumulated so far; a new tile with max m_tile
// and sum l_tile is merged by rescaling both sides to m_new = max(m, m_tile): the old side by exp(m - m_new), the
// tile by exp(m_tile - m_new). Nothing is approximated, so the result equals softmax(S) V up to fp rounding.
// Here the CPU's caches play the part of the GPU's SRAM; the tile sizes come from the same Algorithm 1 formulas.
// Threads: `threads` workers of the lab's pool, as v1_naive (the lesson gives both the same number, both cores by
// default); neither kernel calls OpenBLAS. In FlashAttention-2's order each worker takes the next Q block from a queue
// shared with the others (block_queue.h), as v1_naive takes its blocks; in Algorithm 1's order worker w keeps Q blocks
// w, w + W, ... for the whole run, since it streams the K/V blocks past the same Q blocks again and again.
#include <mutex>
#include <stdexcept>
#include <type_traits>

#include "engine/parallel.h"
#include "kernels/attention/attention.h"
#include "kernels/attention/cpu/block_queue.h"
#include "kernels/attention/cpu/lane_fold.h"
#include "kernels/attention/cpu/plain_fold.h"

namespace dlsys::attention {

namespace {

// The two loop orders over the tiles, each worker over its own Q blocks with its own fold (plain_fold.h or
// lane_fold.h: what the worker keeps on chip and how it folds a tile in). The loops count the main-memory traffic
// of the block loads and stores Algorithm 1 and FlashAttention-2 make.
template <typename T, typename Fold>
class TiledAttention {
 public:
  TiledAttention(const Problem& p, const Tiling& t) : p_(p), t_(t), tr_(row_blocks(p.n, t)), tc_(col_blocks(p.n, t)) {}

  // FlashAttention-2's order: one Q block at a time; its m, l and unnormalised output stay with the worker until
  // every K/V block has been folded in, then the output is divided by l once.
  void run_q_outer(BlockQueue& q_blocks, Fold& fold, Traffic& traffic) const {
    for (std::int64_t i = 0; q_blocks.take(i);) {
      const std::int64_t rows = rows_in_block(p_.n, t_, i);
      fold.begin_q_block(i);
      traffic.read_elements += double(rows * p_.d);  // Q_i
      for (std::int64_t j = 0; j < tc_; ++j) {
        if (!tile_needed(p_.n, t_, p_.causal, i, j)) continue;
        traffic.read_elements += 2.0 * double(cols_in_block(p_.n, t_, j) * p_.d);  // K_j, V_j
        fold.fold(i, j, /*normalised=*/false, traffic);
      }
      fold.end_q_block(i);
      traffic.write_elements += double(rows * p_.d);  // O_i
    }
  }

  // Algorithm 1's order: K/V blocks outside, Q blocks inside. Every tile loads O_i, l_i, m_i from main memory and
  // stores them back, O_i normalised by the new l each time (line 12).
  void run_kv_outer(std::int64_t worker, std::int64_t workers, Fold& fold, T* o, T* m_all, T* l_all,
                    Traffic& traffic) const {
    for (std::int64_t i = worker; i < tr_; i += workers) {  // line 2: O = 0, l = 0, m = -inf in main memory
      const std::int64_t rows = rows_in_block(p_.n, t_, i), row_begin = i * t_.br;
      for (std::int64_t e = 0; e < rows * p_.d; ++e) o[row_begin * p_.d + e] = 0;
      for (std::int64_t r = 0; r < rows; ++r) m_all[row_begin + r] = T(-INFINITY), l_all[row_begin + r] = 0;
      traffic.write_elements += double(rows * (p_.d + 2));
    }
    for (std::int64_t j = 0; j < tc_; ++j) {
      bool kv_loaded = false;
      for (std::int64_t i = worker; i < tr_; i += workers) {
        if (!tile_needed(p_.n, t_, p_.causal, i, j)) continue;
        if (!kv_loaded) traffic.read_elements += 2.0 * double(cols_in_block(p_.n, t_, j) * p_.d);  // line 6
        kv_loaded = true;
        const std::int64_t rows = rows_in_block(p_.n, t_, i);
        fold.load_block(i, m_all, l_all);
        traffic.read_elements += double(rows * (2 * p_.d + 2));  // line 8: Q_i, O_i, l_i, m_i
        traffic.write_elements += double(rows * (p_.d + 2));     // lines 12-13: O_i, l_i, m_i (stored just below)
        fold.fold(i, j, /*normalised=*/true, traffic);
        fold.store_block(i, m_all, l_all);
      }
    }
  }

 private:
  const Problem& p_;
  const Tiling& t_;
  std::int64_t tr_, tc_;
};

// Runs the loop order on every worker with folds of type Fold.
template <typename T, typename Fold>
void run_tiles(const Problem& p, const Tiling& t, LoopOrder order, const T* q, const T* k, const T* v, T* o,
               std::span<T> scratch, std::int64_t workers, const TileTrace* trace, Traffic* counted) {
  const std::int64_t tile_elements = flash_tile_scratch_elements(t, p.d);
  T* m_all = scratch.data() + workers * tile_elements;  // KvOuter only: m (n), l (n) in main memory
  T* l_all = m_all + p.n;
  const TiledAttention<T, Fold> kernel(p, t);
  BlockQueue q_blocks(row_blocks(p.n, t), workers);
  std::mutex traffic_mutex;
  parallel_for(workers, int(workers), [&](std::int64_t worker_begin, std::int64_t worker_end) {
    for (std::int64_t w = worker_begin; w < worker_end; ++w) {
      Traffic traffic;
      Fold fold(p, t, q, k, v, o, scratch.data() + w * tile_elements, trace);
      if (order == LoopOrder::QOuter)
        kernel.run_q_outer(q_blocks, fold, traffic);
      else
        kernel.run_kv_outer(w, workers, fold, o, m_all, l_all, traffic);
      if (counted != nullptr) {
        std::lock_guard lock(traffic_mutex);
        counted->read_elements += traffic.read_elements;
        counted->write_elements += traffic.write_elements;
      }
    }
  });
}

}  // namespace

template <typename T>
void v2_flash(const Problem& p, const Tiling& t, LoopOrder order, const T* q, const T* k, const T* v, T* o,
              std::span<T> scratch, int threads, const TileTrace* trace, Traffic* counted) {
  if (p.n < 1 || p.d < 1 || t.br < 1 || t.bc < 1) throw std::invalid_argument("v2_flash: n, d, br, bc must be >= 1");
  if (trace != nullptr) threads = 1;  // trace calls arrive in loop order
  if (counted != nullptr) *counted = {};
  const std::int64_t workers = flash_workers(p.n, t, threads);
  if (std::int64_t(scratch.size()) < flash_scratch_elements(p.n, p.d, t, order, workers))
    throw std::invalid_argument("v2_flash: scratch smaller than flash_scratch_elements");
  // Measured fp32 runs take the vector fold; traced runs and double the plain one, whose every number the trace sees.
  if constexpr (std::is_same_v<T, float>)
    if (trace == nullptr) return run_tiles<T, LaneFold>(p, t, order, q, k, v, o, scratch, workers, trace, counted);
  run_tiles<T, PlainFold<T>>(p, t, order, q, k, v, o, scratch, workers, trace, counted);
}

template void v2_flash<float>(const Problem&, const Tiling&, LoopOrder, const float*, const float*, const float*,
                              float*, std::span<float>, int, const TileTrace*, Traffic*);
template void v2_flash<double>(const Problem&, const Tiling&, LoopOrder, const double*, const double*, const double*,
                               double*, std::span<double>, int, const TileTrace*, Traffic*);

}  // namespace dlsys::attention
