// MPI's own collectives, the peer the lab's ring is measured against (mpi_collectives.h).
#include <mpi.h>

#include <vector>

#include "kernels/collectives/mpi/mpi_check.h"
#include "kernels/collectives/mpi_collectives.h"
#include "kernels/collectives/ring_schedule.h"

namespace dlsys::collectives::mpi {

namespace {

// Chunk r is rank r's, with the ring's sizes (the first count % N chunks one element longer).
struct ChunkLayout {
  std::vector<int> counts, displacements;
};
ChunkLayout layout(std::int64_t count, int n) {
  ChunkLayout out;
  for (int c = 0; c < n; ++c) {
    out.counts.push_back(static_cast<int>(chunk_size(count, n, c)));
    out.displacements.push_back(static_cast<int>(chunk_begin(count, n, c)));
  }
  return out;
}

}  // namespace

std::string library_function(Op op, std::int64_t count, int n_ranks) {
  const bool even = count % n_ranks == 0;
  switch (op) {
    case Op::AllReduce:
      return "MPI_Allreduce";
    case Op::ReduceScatter:
      return even ? "MPI_Reduce_scatter_block" : "MPI_Reduce_scatter";
    case Op::AllGather:
      return even ? "MPI_Allgather" : "MPI_Allgatherv";
  }
  return "";
}

void library(Op op, const float* send, float* recv, std::int64_t count) {
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const bool even = count % n == 0;
  const int chunk = static_cast<int>(chunk_size(count, n, rank));
  float* my_chunk = recv + chunk_begin(count, n, rank);
  switch (op) {
    case Op::AllReduce:
      check(MPI_Allreduce(send, recv, static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
      return;
    case Op::ReduceScatter:
      if (even) {
        check(MPI_Reduce_scatter_block(send, my_chunk, chunk, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
              "MPI_Reduce_scatter_block");
      } else {
        const ChunkLayout l = layout(count, n);
        check(MPI_Reduce_scatter(send, my_chunk, l.counts.data(), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
              "MPI_Reduce_scatter");
      }
      return;
    case Op::AllGather: {
      const float* mine = send + chunk_begin(count, n, rank);
      if (even) {
        check(MPI_Allgather(mine, chunk, MPI_FLOAT, recv, chunk, MPI_FLOAT, MPI_COMM_WORLD), "MPI_Allgather");
      } else {
        const ChunkLayout l = layout(count, n);
        check(MPI_Allgatherv(mine, chunk, MPI_FLOAT, recv, l.counts.data(), l.displacements.data(), MPI_FLOAT,
                             MPI_COMM_WORLD),
              "MPI_Allgatherv");
      }
      return;
    }
  }
}

}  // namespace dlsys::collectives::mpi
