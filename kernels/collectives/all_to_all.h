#pragma once
// All-to-all with a count per peer (MPI_Alltoallv's shape): every rank sends a block of its own to every other rank
// and receives one from each. Nothing is summed: it is a personalised exchange, the collective behind a mixture of
// experts' dispatch (tokens to the ranks holding their experts) and combine (the experts' outputs back). An all-reduce
// is another collective (every rank ends with the same sum) and no all-reduce schedule, ring or other, performs it.
//
// Layout: `send` holds the blocks for ranks 0, 1, ..., N-1 one after another, send_counts[p] floats for rank p; `recv`
// receives the blocks from ranks 0..N-1 the same way, recv_counts[p] floats from rank p. Rank p's send_counts[q] must
// equal rank q's recv_counts[p] (a mixture of experts exchanges its counts first, with an all-to-all of one count per
// peer). The rank's own block is copied locally and never crosses a link.
#include <cstdint>
#include <vector>

#include "kernels/collectives/communicator.h"

namespace dlsys::collectives {

// The pairwise schedule over a crossbar (CommOptions::full_mesh): in round d = 1..N-1 rank r sends its block for rank
// r + d and receives the block of rank r - d (mod N), so each round pairs every sender with a distinct receiver and
// every link carries one block. Each round's send and receive alternate segment by segment (cpu/exchange.h).
void all_to_all_rank(Communicator& comm, int rank, const float* send, const std::vector<std::int64_t>& send_counts,
                     float* recv, const std::vector<std::int64_t>& recv_counts);

// Closed forms. The bytes rank `rank` puts on links: its blocks for the other ranks, 4 bytes a float.
std::int64_t all_to_all_bytes_sent(int rank, const std::vector<std::int64_t>& send_counts);
// nccl-tests' bus-bandwidth factor of all-to-all: a rank's data leaves it except its own share, (N-1)/N (all-reduce:
// 2 (N-1)/N).
double all_to_all_bus_factor(int ranks);

}  // namespace dlsys::collectives
