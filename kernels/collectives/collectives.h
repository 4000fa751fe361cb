#pragma once
// Collectives on CPU ranks (threads of a Communicator), fp32 sum. The algorithms teach one idea each:
//   ring  - reduce-scatter then all-gather around a ring: 2(N-1) steps, each rank sends 2(N-1)/N x S bytes, so the
//           time per byte hardly depends on N. Chunks travel in segments, so one rank reduces a segment while its
//           neighbour copies the next (pipelining).
//   naive - everything through rank 0: it receives (N-1) x S bytes and adds them, then sends the sum to everyone,
//           (N-1) x S bytes more: its link carries N-1 times what a ring link carries.
// Operations: all_reduce (every rank ends with the full sum), reduce_scatter (rank r ends with its owned chunk of the
// sum, chunk (r + 1) mod N, see ring_schedule.h) and all_gather (rank r contributes its owned chunk, every rank ends
// with all chunks).
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/collectives/communicator.h"
#include "kernels/collectives/op.h"
#include "kernels/collectives/ring_schedule.h"

namespace dlsys::collectives {

// One buffer pair per rank: send[r] and recv[r] each hold `count` floats ((count) contiguous). They may be the same
// buffer (in place). reduce_scatter writes only the owned chunk of recv[r]; all_gather reads only the owned chunk of
// send[r].
struct RankBuffers {
  std::vector<const float*> send;  // (n_ranks) pointers
  std::vector<float*> recv;        // (n_ranks) pointers
  std::int64_t count = 0;
};

class StepRecorder;  // step_record.h: what each rank did at each step, for the lesson's step-through
class MessageLog;    // collective_algorithms.h: each rank's steps, messages and bytes

// Runs `op` with `algorithm` on all ranks of `comm` and returns when every rank is done. `recorder` (optional) is
// filled by the ring as it runs. RecursiveDoubling, Rabenseifner and Direct run all-reduce only and need a
// communicator with a link between every pair (CommOptions::full_mesh); see collective_algorithms.h.
void run_collective(Communicator& comm, Op op, Algorithm algorithm, const RankBuffers& buffers,
                    StepRecorder* recorder = nullptr);

// The work of one rank; run_collective calls these on every rank thread.
void ring_rank(Communicator& comm, int rank, Op op, const RankBuffers& buffers, StepRecorder* recorder);
void naive_rank(Communicator& comm, int rank, Op op, const RankBuffers& buffers, MessageLog* log = nullptr);

}  // namespace dlsys::collectives
