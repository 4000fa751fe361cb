#pragma once
// Collectives between processes, one rank per process, over MPI (the world of engine/mpi_world.h), fp32 sum, out of
// place. Callable from code that never includes mpi.h; without MPI in the build a stub (mpi/*_none.cpp) throws
// RunFailure instead.
//   ring    - the lab's ring (ring_schedule.h: same chunks, same schedule, sizes not divisible by N alike) with each
//             step one MPI_Sendrecv to the neighbours. The incoming chunk lands in place in recv and is reduced
//             there, so the only pass over memory beyond the transfer is the add itself.
//   library - MPI's own: MPI_Allreduce, MPI_Reduce_scatter(_block), MPI_Allgather(v).
// Where results land: the ring leaves rank r's reduce-scatter result in its owned chunk (r + 1) mod N and gathers
// chunk c from rank c - 1; MPI leaves chunk r at rank r and gathers chunk c from rank c (see rank_reference.h).
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/collectives/op.h"
#include "kernels/collectives/rank_group.h"
#include "kernels/collectives/step_record.h"

namespace dlsys::collectives::mpi {

// Every rank calls with the same op and count; send and recv hold `count` floats each, or are one buffer (in place).
// The ring uses all of recv as its working space (reduce-scatter leaves partial sums outside the owned chunk);
// all-gather reads only the contributed chunk of send.
void ring(Op op, const float* send, float* recv, std::int64_t count);
void library(Op op, const float* send, float* recv, std::int64_t count);

// Data bytes this process's `ring` calls have handed to MPI_Sendrecv to send and to receive, since the process
// started (the recorded ring's contributor masks not included): counted, for lessons that compare with closed forms.
// Read them before and after the calls of interest.
std::int64_t ring_bytes_sent();
std::int64_t ring_bytes_received();

// All-to-all between the processes with a count per peer (all_to_all.h's layout), one MPI_Alltoallv; the bytes it
// hands to other processes, since the process started (its own block excluded, as on threads).
void all_to_all(const float* send, const std::vector<std::int64_t>& send_counts, float* recv,
                const std::vector<std::int64_t>& recv_counts);
std::int64_t all_to_all_bytes_sent();
std::int64_t all_to_all_bytes_received();

// The processes of the open MPI session as a rank group (rank_group.h): this process hosts its own rank, and the
// group's ring is `ring` above.
std::unique_ptr<RankGroup> world_group();

// The same ring on tiny inputs with the per-step record of step_record.h: `input` is this rank's ((count) floats, the
// same count on every rank, at most 4096); each step also carries the sender's contributors mask. Rank 0 returns the
// whole ring's record, gathered from every rank, the same record the threads' ring makes from the same inputs; the
// other ranks return an empty one.
CollectiveRecord record_ring(Op op, const std::vector<float>& input);

// The MPI function `library` calls for `op` at `count` over `n_ranks` (the _block or plain variant depends on
// whether count divides by N).
std::string library_function(Op op, std::int64_t count, int n_ranks);

}  // namespace dlsys::collectives::mpi
