// Ring reduce-scatter and all-gather on CPU ranks (the schedule is in ring_schedule.h).
//   Reduce-scatter: N-1 steps; at each, a rank sends one chunk to its right neighbour and adds the chunk arriving from
//   its left one into its own copy. All-gather: N-1 steps moving the finished chunks the same way, copying instead of
//   adding. All-reduce is one then the other.
//
// Pipelining: within a step a rank alternates "send segment k" and "receive segment k", and the next step's first
// segment can leave as soon as it has been reduced, so a rank's neighbour adds segment k while the rank copies k+1.
// Why the ring cannot deadlock with 4 slots per link: each rank has sent at most one segment more than it has
// received (neighbouring chunks differ by at most one segment), so not every link can be full at once.
#include <algorithm>
#include <cstring>

#include "kernels/collectives/collectives.h"
#include "kernels/collectives/step_record.h"

namespace dlsys::collectives {

namespace {

struct RankView {
  int rank;
  int n_ranks;
  const float* send;  // (count)
  float* recv;        // (count)
  std::int64_t count;
  std::int64_t segment;
  std::int64_t begin(int chunk) const { return chunk_begin(count, n_ranks, chunk); }
  std::int64_t size(int chunk) const { return chunk_size(count, n_ranks, chunk); }
};

// One step: send chunk `send_chunk` from `source`, receive chunk `recv_chunk` into `recv` (added to `mine` when
// reducing), segment by segment. Returns the contributors that came with the received chunk.
std::uint64_t ring_step(Channel& to_next, Channel& from_prev, const RankView& v, const float* source, int send_chunk,
                        int recv_chunk, const float* mine, std::uint64_t send_contributors) {
  const std::int64_t send_size = v.size(send_chunk), recv_size = v.size(recv_chunk);
  const std::int64_t send_segments = segment_count(send_size, v.segment);
  const std::int64_t recv_segments = segment_count(recv_size, v.segment);
  const float* from = source + v.begin(send_chunk);
  float* into = v.recv + v.begin(recv_chunk);
  const float* added = mine == nullptr ? nullptr : mine + v.begin(recv_chunk);
  std::uint64_t received = 0;
  for (std::int64_t k = 0; k < std::max(send_segments, recv_segments); ++k) {
    const std::int64_t offset = k * v.segment;
    if (k < send_segments) to_next.send(from + offset, std::min(v.segment, send_size - offset), send_contributors);
    if (k < recv_segments) received = receive_segment(from_prev, into + offset, added == nullptr ? nullptr : added + offset);
  }
  return received;
}

void reduce_scatter_phase(Channel& to_next, Channel& from_prev, const RankView& v, StepRecorder* recorder) {
  for (int s = 0; s < v.n_ranks - 1; ++s) {
    const int send_chunk = reduce_scatter_send_chunk(v.rank, s, v.n_ranks);
    const int recv_chunk = reduce_scatter_recv_chunk(v.rank, s, v.n_ranks);
    // Step 0 sends the rank's own input; later steps forward the partial sum received one step earlier.
    // Each chunk arrives exactly once, so the sum is always "my input + what arrived" (out of place or in place).
    const float* source = s == 0 ? v.send : v.recv;
    const std::uint64_t mask = recorder ? recorder->contributors(v.rank, send_chunk) : 0;
    const std::uint64_t received = ring_step(to_next, from_prev, v, source, send_chunk, recv_chunk, v.send, mask);
    if (recorder) recorder->record(v.rank, "reduce_scatter", s, send_chunk, recv_chunk, received, v.recv);
  }
}

void all_gather_phase(Channel& to_next, Channel& from_prev, const RankView& v, StepRecorder* recorder) {
  for (int s = 0; s < v.n_ranks - 1; ++s) {
    const int send_chunk = all_gather_send_chunk(v.rank, s, v.n_ranks);
    const int recv_chunk = all_gather_recv_chunk(v.rank, s, v.n_ranks);
    const std::uint64_t mask = recorder ? recorder->contributors(v.rank, send_chunk) : 0;
    const std::uint64_t received = ring_step(to_next, from_prev, v, v.recv, send_chunk, recv_chunk, nullptr, mask);
    if (recorder) recorder->record(v.rank, "all_gather", s, send_chunk, recv_chunk, received, v.recv);
  }
}

void copy_floats(float* target, const float* source, std::int64_t count) {
  if (target != source && count > 0) std::memcpy(target, source, static_cast<std::size_t>(count) * sizeof(float));
}

}  // namespace

void ring_rank(Communicator& comm, int rank, Op op, const RankBuffers& buffers, StepRecorder* recorder) {
  const int n = comm.size();
  const RankView v{rank, n, buffers.send[rank], buffers.recv[rank], buffers.count, comm.segment_elements()};
  if (recorder) recorder->start(rank, v.send);
  if (n == 1) {  // nothing to exchange: the result is the rank's own input
    copy_floats(v.recv, v.send, v.count);
    return;
  }
  Channel& to_next = comm.link(rank, next_rank(rank, n));
  Channel& from_prev = comm.link(prev_rank(rank, n), rank);
  if (op != Op::AllGather) reduce_scatter_phase(to_next, from_prev, v, recorder);
  if (op == Op::AllGather) {  // the rank's contribution starts in its send buffer
    const int mine = owned_chunk(rank, n);
    copy_floats(v.recv + v.begin(mine), v.send + v.begin(mine), v.size(mine));
  }
  if (op != Op::ReduceScatter) all_gather_phase(to_next, from_prev, v, recorder);
}

}  // namespace dlsys::collectives
