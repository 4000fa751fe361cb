#pragma once
// The copy ceiling's probe: what the ranks of a communicator can copy, on their own threads, woken the way a
// collective wakes them, through the same buffers. A rank's link is a memory copy, so its busbw can beat neither this
// rate nor the latency of waking the ranks; probing with the collective's threads, buffers and per-rank byte count
// keeps caches, core sharing and wake-ups alike on both sides of the comparison.
#include <cstdint>

#include "kernels/collectives/collectives.h"

namespace dlsys::collectives {

enum class CopyKind {
  Memcpy,     // std::memcpy: writes through the cache (fastest while the buffers fit in it)
  Streaming,  // the streaming stores the ring writes its results with (fastest beyond the caches)
};

// Ranks 0..copying_ranks-1 each copy `bytes_per_rank` bytes from buffers.send[r] into buffers.recv[r] (going round
// the `count` elements again when bytes_per_rank is larger); the other ranks are woken and return at once.
void copy_on_ranks(Communicator& comm, const RankBuffers& buffers, std::int64_t bytes_per_rank, CopyKind kind,
                   int copying_ranks);

}  // namespace dlsys::collectives
