// v1_naive: standard attention as three separate passes, the way three separate library calls would run it.
// Each pass finishes over the whole n x n matrix before the next begins, so S really is written to main memory and
// read back (4 n^2 elements of traffic), and the scratch is n^2 floats however the rows are shared among threads.
// The passes run the tiled kernel's own vector loops (query_lanes.h), so the two kernels differ in what they keep in
// memory and nothing else. S is laid out as those loops write it, the way a GEMM writes its output tiles: in blocks
// of kGroupQueries (48 with AVX-512) queries, each block key-major (block b's scores of key c for its queries are
// contiguous), so every pass streams a block's n x 48 panel front to back.
// Threads: `threads` workers of the lab's pool (the lesson gives both kernels the same number, both cores by
// default), each taking the next block of queries from a shared queue in every pass (block_queue.h), as the tiled
// kernel takes its Q blocks. Neither kernel calls OpenBLAS. Each worker's panel of d x 48 floats (its block of queries
// transposed in pass 1, its block of outputs in pass 3) is not in the n x n count, which favours this kernel a little
// in the lesson's memory comparison; the tiled kernel's count includes its panels.
#include <algorithm>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "engine/parallel.h"
#include "kernels/attention/attention.h"
#include "kernels/attention/cpu/block_queue.h"
#include "kernels/attention/cpu/query_lanes.h"

namespace dlsys::attention {

namespace {

using lanes::kGroupQueries;

// Keys S^T is summed over in pass 3 per visit of the output block: their P^T rows (48 x 4 bytes each) and value rows
// stay in L1 while every column block of the output uses them, as the tiled kernel's bc-key tiles do.
constexpr std::int64_t kKeyChunk = 64;

struct QueryBlock {
  std::int64_t row_begin = 0, rows = 0;
  std::int64_t visible_keys = 0;  // keys 0..visible_keys-1 are visible to some query of the block
  float* scores = nullptr;        // (n, rows): S^T of this block's queries, then P^T
};

// Runs body(block, panel) for every block of queries, each worker with one panel of d x 48 floats.
template <typename Body>
void for_each_block(const Problem& p, float* s, int threads, Body&& body) {
  const std::int64_t blocks = ceil_div(p.n, kGroupQueries);
  const std::int64_t workers = std::max<std::int64_t>(1, std::min<std::int64_t>(threads, blocks));
  BlockQueue queue(blocks, workers);
  parallel_for(workers, int(workers), [&](std::int64_t, std::int64_t) {
    std::vector<float> panel(std::size_t(p.d * kGroupQueries));
    for (std::int64_t b = 0; queue.take(b);) {
      QueryBlock block;
      block.row_begin = b * kGroupQueries;
      block.rows = std::min(kGroupQueries, p.n - block.row_begin);
      block.visible_keys = p.causal ? block.row_begin + block.rows : p.n;
      block.scores = s + block.row_begin * p.n;
      body(block, panel.data());
    }
  });
}

}  // namespace

void v1_naive(const Problem& p, const float* q, const float* k, const float* v, float* o, std::span<float> s_scratch,
              int threads) {
  if (std::int64_t(s_scratch.size()) < naive_scratch_elements(p.n))
    throw std::invalid_argument("v1_naive: scratch smaller than n x n");
  float* s = s_scratch.data();  // s: n x n, S^T by blocks of queries; S, then P in place
  const float scale = float(p.scale);
  const std::int64_t n = p.n, d = p.d;
  // Pass 1: S = scale Q K^T, masked entries -inf.
  for_each_block(p, s, threads, [&](const QueryBlock& b, float* q_panel) {
    lanes::pack_transposed(q + b.row_begin * d, b.rows, d, q_panel, kGroupQueries);
    lanes::for_each_query_group(b.rows, [&](auto vecs, std::int64_t, std::int64_t lanes_last) {
      constexpr int V = decltype(vecs)::value;
      lanes::scores_group<V>(q_panel, kGroupQueries, k, b.visible_keys, d, scale, b.scores, b.rows, lanes_last);
      if (p.causal) lanes::mask_after_diagonal<V>(b.scores, b.rows, b.visible_keys, 0, b.row_begin, lanes_last);
    });
    std::fill(b.scores + b.visible_keys * b.rows, b.scores + n * b.rows, -INFINITY);
  });
  // Pass 2: P = softmax(S) query by query, max subtracted. Masked keys get probability 0.
  for_each_block(p, s, threads, [&](const QueryBlock& b, float*) {
    lanes::for_each_query_group(b.rows, [&](auto vecs, std::int64_t, std::int64_t lanes_last) {
      constexpr int V = decltype(vecs)::value;
      auto at = [&](std::int64_t c, int u) { return b.scores + c * b.rows + u * lanes::kFloats; };
      auto lanes_of = [&](int u) { return u == V - 1 ? lanes_last : std::int64_t(lanes::kFloats); };
      lanes::Vec max[V], sum[V] = {};
      for (int u = 0; u < V; ++u) max[u] = lanes::minus_infinity();
      for (std::int64_t c = 0; c < b.visible_keys; ++c)
        for (int u = 0; u < V; ++u) {
          const lanes::Vec x = lanes::load_lanes(at(c, u), lanes_of(u));
          max[u] = simd::select(x > max[u], x, max[u]);
        }
      auto exponentials = [&](auto masked) {
        for (std::int64_t c = 0; c < b.visible_keys; ++c)
          for (int u = 0; u < V; ++u) {
            const lanes::Vec x = lanes::load_lanes(at(c, u), lanes_of(u));
            const lanes::Vec e = lanes::exp_shifted<decltype(masked)::value>(x, max[u]);
            sum[u] += e;
            lanes::store_lanes(at(c, u), e, lanes_of(u));
          }
      };
      if (p.causal)
        exponentials(std::true_type{});
      else
        exponentials(std::false_type{});
      for (int u = 0; u < V; ++u) sum[u] = 1.0f / sum[u];
      for (std::int64_t c = 0; c < b.visible_keys; ++c)
        for (int u = 0; u < V; ++u)
          lanes::store_lanes(at(c, u), lanes::load_lanes(at(c, u), lanes_of(u)) * sum[u], lanes_of(u));
    });
    std::fill(b.scores + b.visible_keys * b.rows, b.scores + n * b.rows, 0.0f);
  });
  // Pass 3: O = P V, the block's outputs summed key chunk by key chunk in the panel (transposed), then written out.
  for_each_block(p, s, threads, [&](const QueryBlock& b, float* o_panel) {
    lanes::for_each_query_group(b.rows, [&](auto vecs, std::int64_t, std::int64_t lanes_last) {
      constexpr int V = decltype(vecs)::value;
      for (std::int64_t c = 0; c < b.visible_keys; c += kKeyChunk)
        lanes::values_group<V>(b.scores + c * b.rows, b.rows, std::min(kKeyChunk, b.visible_keys - c), v + c * d, d,
                               c == 0 ? lanes::Start::Zero : lanes::Start::Add, nullptr, o_panel, kGroupQueries,
                               lanes_last);
    });
    lanes::unpack_transposed(o_panel, kGroupQueries, nullptr, b.rows, d, o + b.row_begin * d);
  });
}

}  // namespace dlsys::attention
