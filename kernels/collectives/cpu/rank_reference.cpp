#include "kernels/collectives/rank_reference.h"

#include "kernels/collectives/inputs.h"
#include "kernels/collectives/ring_schedule.h"

namespace dlsys::collectives {

std::int64_t count_wrong_on_rank(Op op, const float* recv, std::int64_t count, int rank, int n_ranks,
                                 ChunkOwnership ownership) {
  std::int64_t wrong = 0;
  const int mine = mod(rank + ownership.owner_shift, n_ranks);
  for (int chunk = 0; chunk < n_ranks; ++chunk) {
    if (op == Op::ReduceScatter && chunk != mine) continue;
    const int contributor = mod(chunk - ownership.owner_shift, n_ranks);  // all-gather: whose input chunk c is
    const std::int64_t end = chunk_begin(count, n_ranks, chunk + 1);
    for (std::int64_t i = chunk_begin(count, n_ranks, chunk); i < end; ++i) {
      float expected = 0;
      if (op == Op::AllGather) {
        expected = input_value(contributor, i);
      } else {
        for (int r = 0; r < n_ranks; ++r) expected += input_value(r, i);
      }
      if (!(recv[i] == expected)) ++wrong;
    }
  }
  return wrong;
}

}  // namespace dlsys::collectives
