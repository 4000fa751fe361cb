// Direct reduce-scatter + all-gather over a crossbar (collective_algorithms.h). Rank r owns chunk r. At step d of a
// phase rank r sends to rank r + d and receives from rank r - d (mod N): every ordered pair is used once per phase, and
// each step pairs every sender with a distinct receiver.
#include <cstring>

#include "kernels/collectives/collective_algorithms.h"
#include "kernels/collectives/cpu/exchange.h"

namespace dlsys::collectives {

void direct_rank(Communicator& comm, int rank, const RankBuffers& b, MessageLog* log) {
  const int n = comm.size();
  const std::int64_t count = b.count;
  const float* send = b.send[rank];
  float* recv = b.recv[rank];
  const auto begin = [&](int chunk) { return chunk_begin(count, n, chunk); };
  const auto size = [&](int chunk) { return chunk_size(count, n, chunk); };
  constexpr std::int64_t kFloatBytes = sizeof(float);
  // The owned chunk starts as the rank's own input; N = 1 ends here.
  if (recv != send && size(rank) > 0)
    std::memcpy(recv + begin(rank), send + begin(rank), static_cast<std::size_t>(size(rank)) * sizeof(float));
  for (int d = 1; d < n; ++d) {  // reduce-scatter: chunk `to` of my input to its owner; my chunk from `from`, added
    const int to = mod(rank + d, n), from = mod(rank - d, n);
    detail::exchange(comm.link(rank, to), send + begin(to), size(to), comm.link(from, rank), recv + begin(rank),
                     recv + begin(rank), size(rank));
    if (log) log->add(rank, {"reduce_scatter", to, size(to) * kFloatBytes, from, size(rank) * kFloatBytes, true});
  }
  for (int d = 1; d < n; ++d) {  // all-gather: my summed chunk to every peer; theirs into place
    const int to = mod(rank + d, n), from = mod(rank - d, n);
    detail::exchange(comm.link(rank, to), recv + begin(rank), size(rank), comm.link(from, rank), recv + begin(from),
                     nullptr, size(from));
    if (log) log->add(rank, {"all_gather", to, size(rank) * kFloatBytes, from, size(from) * kFloatBytes, false});
  }
}

}  // namespace dlsys::collectives
