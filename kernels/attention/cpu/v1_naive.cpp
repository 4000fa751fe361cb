// v1_naive: standard attention as three separate passes, the way three separate library calls would run it.
// Each pass finishes over the whole n x n matrix before the next begins, so S really is written to main memory and
// read back (4 n^2 elements of traffic), and the scratch is n^2 floats however the rows are shared among threads.
#include <stdexcept>

#include "engine/parallel.h"
#include "kernels/attention/attention.h"
#include "kernels/attention/cpu/block_ops.h"

namespace dlsys::attention {

void v1_naive(const Problem& p, const float* q, const float* k, const float* v, float* o, std::span<float> s_scratch,
              int threads) {
  if (std::int64_t(s_scratch.size()) < naive_scratch_elements(p.n))
    throw std::invalid_argument("v1_naive: scratch smaller than n x n");
  float* s = s_scratch.data();  // s: (n, n) row-major; S, then P in place
  const float scale = float(p.scale);
  const std::int64_t n = p.n, d = p.d;
  // Pass 1: S = scale Q K^T, masked entries -inf.
  parallel_for(n, threads, [&](std::int64_t begin, std::int64_t end) {
    detail::scores_block(q, begin, end - begin, k, 0, n, d, scale, p.causal, s + begin * n, n);
  });
  // Pass 2: P = softmax(S) row by row, max subtracted. Masked keys (after the diagonal) get probability 0.
  parallel_for(n, threads, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      float* row = s + i * n;
      const std::int64_t visible = p.causal ? i + 1 : n;
      const float sum = detail::exp_shifted_in_place(row, visible, detail::row_max(row, visible));
      detail::scale_row(row, visible, 1.0f / sum);
      for (std::int64_t j = visible; j < n; ++j) row[j] = 0;
    }
  });
  // Pass 3: O = P V.
  parallel_for(n, threads, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      float* o_row = o + i * d;
      for (std::int64_t e = 0; e < d; ++e) o_row[e] = 0;
      detail::accumulate_weighted_values(s + i * n, p.causal ? i + 1 : n, v, d, o_row);
    }
  });
}

}  // namespace dlsys::attention
