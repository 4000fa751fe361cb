// All-to-all over a crossbar of CPU links (all_to_all.h): N-1 rounds of pairwise exchange, the own block copied.
#include "kernels/collectives/all_to_all.h"

#include <cstring>
#include <stdexcept>

#include "kernels/collectives/cpu/exchange.h"
#include "kernels/collectives/ring_schedule.h"

namespace dlsys::collectives {

namespace {

// Where each peer's block starts in a buffer laid out by `counts`.
std::vector<std::int64_t> block_offsets(const std::vector<std::int64_t>& counts) {
  std::vector<std::int64_t> offsets(counts.size(), 0);
  for (std::size_t p = 1; p < counts.size(); ++p) offsets[p] = offsets[p - 1] + counts[p - 1];
  return offsets;
}

}  // namespace

void all_to_all_rank(Communicator& comm, int rank, const float* send, const std::vector<std::int64_t>& send_counts,
                     float* recv, const std::vector<std::int64_t>& recv_counts) {
  const int n = comm.size();
  if (int(send_counts.size()) != n || int(recv_counts.size()) != n)
    throw std::invalid_argument("all-to-all needs one send and one receive count per rank");
  const std::vector<std::int64_t> send_at = block_offsets(send_counts), recv_at = block_offsets(recv_counts);
  const auto me = std::size_t(rank);
  if (send_counts[me] != recv_counts[me]) throw std::invalid_argument("all-to-all: a rank's own block changed size");
  if (send_counts[me] > 0)
    std::memcpy(recv + recv_at[me], send + send_at[me], std::size_t(send_counts[me]) * sizeof(float));
  for (int d = 1; d < n; ++d) {
    const auto to = std::size_t(mod(rank + d, n)), from = std::size_t(mod(rank - d, n));
    detail::exchange(comm.link(rank, int(to)), send + send_at[to], send_counts[to], comm.link(int(from), rank),
                     recv + recv_at[from], nullptr, recv_counts[from]);
  }
}

std::int64_t all_to_all_bytes_sent(int rank, const std::vector<std::int64_t>& send_counts) {
  std::int64_t floats = 0;
  for (std::size_t p = 0; p < send_counts.size(); ++p)
    if (int(p) != rank) floats += send_counts[p];
  return floats * std::int64_t(sizeof(float));
}

double all_to_all_bus_factor(int ranks) { return double(ranks - 1) / double(ranks); }

}  // namespace dlsys::collectives
