// All-to-all between processes (mpi_collectives.h): MPI_Alltoallv with the blocks laid out as all_to_all.h says.
#include <mpi.h>

#include <atomic>
#include <climits>
#include <stdexcept>

#include "engine/mpi_world.h"
#include "kernels/collectives/mpi/mpi_check.h"
#include "kernels/collectives/mpi_collectives.h"

namespace dlsys::collectives::mpi {

namespace {

std::atomic<std::int64_t> g_bytes_sent{0}, g_bytes_received{0};

// MPI counts and displacements are ints: the lesson bounds its blocks well below INT_MAX floats.
std::vector<int> as_ints(const std::vector<std::int64_t>& counts) {
  std::vector<int> out;
  for (std::int64_t c : counts) {
    if (c < 0 || c > INT_MAX) throw RunFailure("an all-to-all block does not fit MPI's int counts");
    out.push_back(int(c));
  }
  return out;
}

std::vector<int> offsets_of(const std::vector<int>& counts) {
  std::vector<int> offsets(counts.size(), 0);
  for (std::size_t p = 1; p < counts.size(); ++p) offsets[p] = offsets[p - 1] + counts[p - 1];
  return offsets;
}

// Floats in every block but the own one, as bytes.
std::int64_t off_rank_bytes(const std::vector<int>& counts, int rank) {
  std::int64_t floats = 0;
  for (std::size_t p = 0; p < counts.size(); ++p)
    if (int(p) != rank) floats += counts[p];
  return 4 * floats;
}

}  // namespace

void all_to_all(const float* send, const std::vector<std::int64_t>& send_counts, float* recv,
                const std::vector<std::int64_t>& recv_counts) {
  const dlsys::mpi::World* world = dlsys::mpi::world();
  if (!world) throw RunFailure("an all-to-all between processes needs an MPI session, and none is open");
  if (int(send_counts.size()) != world->size || int(recv_counts.size()) != world->size)
    throw std::invalid_argument("all-to-all needs one send and one receive count per rank");
  const std::vector<int> sends = as_ints(send_counts), receives = as_ints(recv_counts);
  const std::vector<int> send_at = offsets_of(sends), recv_at = offsets_of(receives);
  check(MPI_Alltoallv(send, sends.data(), send_at.data(), MPI_FLOAT, recv, receives.data(), recv_at.data(), MPI_FLOAT,
                      MPI_COMM_WORLD),
        "MPI_Alltoallv");
  g_bytes_sent.fetch_add(off_rank_bytes(sends, world->rank), std::memory_order_relaxed);
  g_bytes_received.fetch_add(off_rank_bytes(receives, world->rank), std::memory_order_relaxed);
}

std::int64_t all_to_all_bytes_sent() { return g_bytes_sent.load(std::memory_order_relaxed); }
std::int64_t all_to_all_bytes_received() { return g_bytes_received.load(std::memory_order_relaxed); }

}  // namespace dlsys::collectives::mpi
