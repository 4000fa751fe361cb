#pragma once
// Two-way transfers for the algorithms where two ranks swap data at the same step. Over bounded links a rank that
// first sends a whole long message waits for a free slot while its partner, doing the same, never receives: so both
// alternate, one segment out, one segment in.
#include <cstdint>

#include "kernels/collectives/channel.h"

namespace dlsys::collectives::detail {

// Sends `send_count` floats from `source` over `out` while receiving `recv_count` floats from `in` into `target`
// (target = mine + incoming when `mine` is given, else a copy). Segment k is sent before segment k is received, so
// `source` may be the same memory as `target` (recursive doubling sends its partial sum and adds into it).
void exchange(Channel& out, const float* source, std::int64_t send_count, Channel& in, float* target, const float* mine,
              std::int64_t recv_count);

}  // namespace dlsys::collectives::detail
