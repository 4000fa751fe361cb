#pragma once
// Block sizes, tile counts, scratch sizes and main-memory traffic of attention, shared by the CPU kernels, the CUDA
// kernels (host and device) and the lesson's theory. Everything is counted in ELEMENTS first (Algorithm 1 of the
// FlashAttention paper, Dao et al. 2022, counts its on-chip memory M in elements, not bytes: errata E21), and turned
// into bytes only at the end with the element size.
#include <cmath>
#include <cstdint>

#include "kernels/common/ceil_div.h"
#include "kernels/common/host_device.h"

namespace dlsys::attention {

// One attention head: q, k, v, o are (n, d) row-major. s_ij = scale * q_i . k_j, o_i = sum_j softmax(s_i)_j v_j.
struct Problem {
  std::int64_t n = 0;
  std::int64_t d = 0;
  bool causal = false;  // key j is visible to query i only when j <= i
  double scale = 0;     // 1/sqrt(d) for attention; Algorithm 1 as printed leaves it out (see default_scale)
};

// Row blocks of Q (and O, l, m) have br rows; column blocks of K and V have bc rows.
struct Tiling {
  std::int64_t br = 0;
  std::int64_t bc = 0;
};

// The two loop orders; both compute exactly the same O.
//   KvOuter - Algorithm 1 (FlashAttention-1): for each K/V block j, for each Q block i. O_i, l_i, m_i go back to
//             main memory after every tile.
//   QOuter  - FlashAttention-2: for each Q block i, for each K/V block j. O_i, l_i, m_i stay on chip until i is done.
enum class LoopOrder { KvOuter, QOuter };

using ::dlsys::ceil_div;
DLSYS_HOST_DEVICE constexpr std::int64_t min_of(std::int64_t a, std::int64_t b) { return a < b ? a : b; }

// The scale attention uses. Algorithm 1 line 9 writes S_ij = Q_i K_j^T without it; applying it to every score as it
// is computed (or pre-scaling Q once) is what the prose and every implementation do.
inline double default_scale(std::int64_t d) { return 1.0 / std::sqrt(double(d)); }

// M: how many elements of `element_bytes` fit in `sram_bytes` of on-chip memory.
DLSYS_HOST_DEVICE constexpr std::int64_t sram_elements(std::int64_t sram_bytes, std::int64_t element_bytes) {
  return sram_bytes / element_bytes;
}

// Algorithm 1 line 1: Bc = ceil(M / (4d)) (a row of each of q, k, v and o is d elements: 4d per block row),
// Br = min(ceil(M / (4d)), d).
DLSYS_HOST_DEVICE constexpr std::int64_t block_cols(std::int64_t m_elements, std::int64_t d) {
  return ceil_div(m_elements, 4 * d);
}
DLSYS_HOST_DEVICE constexpr std::int64_t block_rows(std::int64_t m_elements, std::int64_t d) {
  return min_of(ceil_div(m_elements, 4 * d), d);
}
DLSYS_HOST_DEVICE constexpr Tiling algorithm1_tiling(std::int64_t m_elements, std::int64_t d) {
  return {block_rows(m_elements, d), block_cols(m_elements, d)};
}

// Tr = ceil(N / Br) blocks of Q, Tc = ceil(N / Bc) blocks of K and V; the last block of each may be short.
DLSYS_HOST_DEVICE constexpr std::int64_t row_blocks(std::int64_t n, const Tiling& t) { return ceil_div(n, t.br); }
DLSYS_HOST_DEVICE constexpr std::int64_t col_blocks(std::int64_t n, const Tiling& t) { return ceil_div(n, t.bc); }

// Elements the Q_i, K_j, V_j and O_i blocks take on chip at once: (2 Br + 2 Bc) d.
DLSYS_HOST_DEVICE constexpr std::int64_t block_elements(std::int64_t d, const Tiling& t) {
  return (2 * t.br + 2 * t.bc) * d;
}
// What Algorithm 1's own sizes may take: 4 d ceil(M / (4d)). The ceiling can overshoot M by fewer than 4d elements
// (the paper's analysis is up to constants); user-chosen tiles get the same allowance, no more. M must hold at least
// one row each of q, k, v and o (4d elements), or no tile fits at all.
DLSYS_HOST_DEVICE constexpr std::int64_t block_budget_elements(std::int64_t m_elements, std::int64_t d) {
  return 4 * d * block_cols(m_elements, d);
}
DLSYS_HOST_DEVICE constexpr bool sram_holds_one_row(std::int64_t m_elements, std::int64_t d) {
  return m_elements >= 4 * d;
}
DLSYS_HOST_DEVICE constexpr bool tiling_fits(std::int64_t m_elements, std::int64_t d, const Tiling& t) {
  return sram_holds_one_row(m_elements, d) && t.br >= 1 && t.bc >= 1 &&
         block_elements(d, t) <= block_budget_elements(m_elements, d);
}

// With a causal mask, tile (i, j) is needed only if some key in block j is visible to some query in block i, i.e.
// the block's first key is not after its last query.
DLSYS_HOST_DEVICE constexpr bool tile_needed(std::int64_t n, const Tiling& t, bool causal, std::int64_t i,
                                             std::int64_t j) {
  const std::int64_t last_row = min_of(n, (i + 1) * t.br) - 1;
  return !causal || j * t.bc <= last_row;
}
DLSYS_HOST_DEVICE constexpr std::int64_t rows_in_block(std::int64_t n, const Tiling& t, std::int64_t i) {
  return min_of(n, (i + 1) * t.br) - i * t.br;
}
DLSYS_HOST_DEVICE constexpr std::int64_t cols_in_block(std::int64_t n, const Tiling& t, std::int64_t j) {
  return min_of(n, (j + 1) * t.bc) - j * t.bc;
}

// Scratch of the naive kernel: S = scale Q K^T, n x n, overwritten in place by P = softmax(S).
DLSYS_HOST_DEVICE constexpr std::int64_t naive_scratch_elements(std::int64_t n) { return n * n; }

// The CPU kernel's vector lanes run over queries (kernels/attention/cpu/query_lanes.h): a worker holds its br query
// rows padded to whole vectors of 16 floats (AVX-512's width, a multiple of the narrower ones).
inline constexpr std::int64_t kCpuQueryLanes = 16;
DLSYS_HOST_DEVICE constexpr std::int64_t cpu_padded_rows(std::int64_t br) {
  return ceil_div(br, kCpuQueryLanes) * kCpuQueryLanes;
}
// Scratch of one worker of the tiled kernel on the CPU, with br' = br padded as above: the S/P tile (bc x br'), the
// Q_i block transposed (d x br'), the O_i accumulator transposed (d x br'), and the running m and l (br' each): what
// Algorithm 1 keeps on chip, K_j and V_j aside (they are read where they lie). Q, K and V are read and O written in
// place in main memory.
DLSYS_HOST_DEVICE constexpr std::int64_t flash_tile_scratch_elements(const Tiling& t, std::int64_t d) {
  return cpu_padded_rows(t.br) * (t.bc + 2 * d + 2);
}
// Workers: one per thread, never more than there are Q blocks to share out. In Algorithm 1's order worker w takes Q
// blocks w, w + W, ... (interleaved, so a causal mask's triangle of work splits evenly); in FlashAttention-2's order
// the CPU kernel's workers take the next Q block as they finish one.
DLSYS_HOST_DEVICE constexpr std::int64_t flash_workers(std::int64_t n, const Tiling& t, std::int64_t threads) {
  return min_of(threads < 1 ? 1 : threads, row_blocks(n, t) < 1 ? 1 : row_blocks(n, t));
}
// Whole scratch of the tiled kernel. Algorithm 1's order also keeps l and m (n each) in main memory between tiles.
DLSYS_HOST_DEVICE constexpr std::int64_t flash_scratch_elements(std::int64_t n, std::int64_t d, const Tiling& t,
                                                                LoopOrder order, std::int64_t workers) {
  return workers * flash_tile_scratch_elements(t, d) + (order == LoopOrder::KvOuter ? 2 * n : 0);
}

// Shared memory of one CUDA thread block of v2_flash (FlashAttention-2 order): Q_i, K_j, V_j and the O_i accumulator
// (2 br + 2 bc rows of d, the rows of Q_i and K_j one float longer: see flash_cuda_padded_row), the S/P tile
// (br x bc) and four numbers per row (m, l, and the two rescale factors).
DLSYS_HOST_DEVICE constexpr std::int64_t flash_cuda_padded_row(std::int64_t d) { return d + 1; }
DLSYS_HOST_DEVICE constexpr std::int64_t flash_cuda_shared_elements(std::int64_t d, const Tiling& t) {
  return block_elements(d, t) + (t.br + t.bc) * (flash_cuda_padded_row(d) - d) + t.br * t.bc + 4 * t.br;
}

// Main-memory (HBM) traffic in elements, split into reads and writes.
struct Traffic {
  double read_elements = 0;
  double write_elements = 0;
  DLSYS_HOST_DEVICE constexpr double total_elements() const { return read_elements + write_elements; }
};

// Standard attention as three passes over memory, each streaming its operands once:
//   S = scale Q K^T (read Q, K: 2nd; write S: n^2), P = softmax(S) (read and write n^2),
//   O = P V (read P: n^2, V: nd; write O: nd). Total 4nd + 4n^2 = Theta(nd + n^2). The mask does not shrink S.
DLSYS_HOST_DEVICE constexpr Traffic naive_traffic(std::int64_t n, std::int64_t d) {
  const double nd = double(n) * double(d), nn = double(n) * double(n);
  return {2 * nd + nn + nn + nd, nn + nn + nd};
}

// The last K/V block Q block i needs: all of them, or with a causal mask the block holding the key of its last query
// (J_i is non-decreasing in i). Keys in K/V blocks 0..j: min(n, (j + 1) bc).
DLSYS_HOST_DEVICE constexpr std::int64_t last_needed_col_block(std::int64_t n, const Tiling& t, bool causal,
                                                               std::int64_t i) {
  return causal ? (min_of(n, (i + 1) * t.br) - 1) / t.bc : col_blocks(n, t) - 1;
}
DLSYS_HOST_DEVICE constexpr std::int64_t keys_through_block(std::int64_t n, const Tiling& t, std::int64_t j) {
  return min_of(n, (j + 1) * t.bc);
}

// The tiled kernel's traffic in the loop order it runs, exact (short last blocks, tiles skipped by the causal mask),
// summed per Q block so it costs O(Tr) however many tiles there are.
//   QOuter:  per Q block: read Q_i once; per tile read K_j and V_j; write O_i once at the end (m, l never leave chip).
//   KvOuter: initialise O, l, m in main memory (nd + 2n writes); per K/V block read K_j, V_j once; per tile read
//            Q_i, O_i, l_i, m_i and write O_i, l_i, m_i back (Algorithm 1 lines 2, 6, 8, 12, 13). Algorithm 1 is one
//            sequential loop; with W workers (worker w takes Q blocks w, w + W, ...) each worker streams the K/V
//            blocks its own Q blocks need, i.e. those its last Q block needs.
DLSYS_HOST_DEVICE inline Traffic flash_traffic(std::int64_t n, std::int64_t d, const Tiling& t, bool causal,
                                               LoopOrder order, std::int64_t workers = 1) {
  Traffic traffic;
  const std::int64_t tr = row_blocks(n, t);
  const double dd = double(d);
  if (order == LoopOrder::QOuter) {
    for (std::int64_t i = 0; i < tr; ++i) {
      const double rows = double(rows_in_block(n, t, i));
      const double keys = double(keys_through_block(n, t, last_needed_col_block(n, t, causal, i)));
      traffic.read_elements += rows * dd + 2.0 * keys * dd;
      traffic.write_elements += rows * dd;
    }
    return traffic;
  }
  traffic.write_elements += double(n) * dd + 2.0 * double(n);
  for (std::int64_t w = 0; w < workers && w < tr; ++w) {
    const std::int64_t last_i = w + ((tr - 1 - w) / workers) * workers;
    traffic.read_elements += 2.0 * dd * double(keys_through_block(n, t, last_needed_col_block(n, t, causal, last_i)));
  }
  for (std::int64_t i = 0; i < tr; ++i) {
    const double rows = double(rows_in_block(n, t, i));
    const double tiles = double(last_needed_col_block(n, t, causal, i) + 1);
    traffic.read_elements += rows * (2.0 * dd + 2.0) * tiles;
    traffic.write_elements += rows * (dd + 2.0) * tiles;
  }
  return traffic;
}

// FLOPs of the two matrix products (2 n^2 d each), the same for both kernels: tiling saves traffic, not arithmetic.
DLSYS_HOST_DEVICE constexpr double matmul_flops(std::int64_t n, std::int64_t d) {
  return 4.0 * double(n) * double(n) * double(d);
}

// Online-softmax merge of two partial results of one row, each described by its max and its sum of exp(s - max):
// (m_old, l_old) so far and (m_tile, l_tile) of the new tile. The factors rescale each side to the new max:
// alpha = exp(m_old - m_new) for what was there, beta = exp(m_tile - m_new) for the tile. A side that saw no visible
// score has max -inf and contributes nothing (its factor is 0, never exp(-inf - -inf) = NaN).
template <typename T>
struct MergeFactors {
  T m_new;
  T l_new;
  T alpha;
  T beta;
};

template <typename T>
DLSYS_HOST_DEVICE inline T rescale_factor(T m_from, T m_to) {
  if (m_from == T(-INFINITY)) return T(0);
#if defined(__CUDA_ARCH__)
  return exp(m_from - m_to);  // CUDA's float and double overloads
#else
  return std::exp(m_from - m_to);
#endif
}

template <typename T>
DLSYS_HOST_DEVICE inline MergeFactors<T> merge_factors(T m_old, T l_old, T m_tile, T l_tile) {
  MergeFactors<T> f;
  f.m_new = m_old > m_tile ? m_old : m_tile;
  f.alpha = rescale_factor(m_old, f.m_new);
  f.beta = rescale_factor(m_tile, f.m_new);
  f.l_new = f.alpha * l_old + f.beta * l_tile;
  return f;
}

}  // namespace dlsys::attention
