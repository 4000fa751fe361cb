#include "kernels/collectives/reference.h"

#include <atomic>

#include "engine/parallel.h"

namespace dlsys::collectives {

void fill_inputs(float* send, int rank, std::int64_t count, int threads) {
  parallel_for(count, threads, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) send[i] = input_value(rank, i);
  });
}

std::int64_t count_wrong(Op op, const std::vector<float*>& recv, std::int64_t count, int threads) {
  const int n = static_cast<int>(recv.size());
  std::atomic<std::int64_t> wrong{0};
  parallel_for(count, threads, [&](std::int64_t begin, std::int64_t end) {
    std::int64_t local = 0;
    int chunk = 0;
    for (std::int64_t i = begin; i < end; ++i) {
      while (chunk_begin(count, n, chunk + 1) <= i) ++chunk;
      float sum = 0;
      for (int r = 0; r < n; ++r) sum += input_value(r, i);
      const float gathered = input_value(prev_rank(chunk, n), i);  // chunk c is owned by rank c - 1
      for (int r = 0; r < n; ++r) {
        if (op == Op::ReduceScatter && owned_chunk(r, n) != chunk) continue;
        const float expected = op == Op::AllGather ? gathered : sum;
        if (!(recv[r][i] == expected)) ++local;  // NaN (never written) counts as wrong
      }
    }
    wrong += local;
  });
  return wrong.load();
}

}  // namespace dlsys::collectives
