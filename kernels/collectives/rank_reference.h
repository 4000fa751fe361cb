#pragma once
// The oracle for one rank's output when the ranks are processes: a rank cannot see the others' buffers, but every
// rank's input is input_value(rank, i) (inputs.h), so each rank computes what it must hold itself and counts the
// elements that differ (the world's total is the sum over ranks).
#include <cstdint>

#include "kernels/collectives/op.h"

namespace dlsys::collectives {

// Which chunk rank r holds or contributes: (r + owner_shift) mod N. The lab's ring: 1 (ring_schedule.h's owned
// chunk); MPI's collectives: 0.
struct ChunkOwnership {
  int owner_shift = 1;
};

// Elements of rank `rank`'s recv (count floats) that differ from what `op` over `n_ranks` must leave there: all-reduce
// the whole sum, reduce-scatter the sum in the rank's chunk, all-gather every chunk equal to its contributor's input.
// NaN (never written) counts as wrong.
std::int64_t count_wrong_on_rank(Op op, const float* recv, std::int64_t count, int rank, int n_ranks,
                                 ChunkOwnership ownership);

}  // namespace dlsys::collectives
