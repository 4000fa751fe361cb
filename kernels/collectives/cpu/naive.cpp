// The obvious way, for comparison with the ring: everything goes through rank 0.
//   Phase 1 (reduce, or gather for all-gather): every other rank sends its data to rank 0, which takes them one after
//   another and adds (or stores) them: (N-1) x S bytes arrive over rank 0's link.
//   Phase 2 (broadcast, or scatter for reduce-scatter): rank 0 sends the result to each rank in turn.
// Rank 0's link is the bottleneck and its load grows with N, where a ring link carries about 2 x S whatever N is.
#include <cstring>

#include "kernels/collectives/collective_algorithms.h"
#include "kernels/collectives/collectives.h"

namespace dlsys::collectives {

namespace {

struct Range {
  std::int64_t begin = 0;
  std::int64_t size = 0;
};

Range whole(std::int64_t count) { return {0, count}; }
Range owned(std::int64_t count, int rank, int n_ranks) {
  const int chunk = owned_chunk(rank, n_ranks);
  return {chunk_begin(count, n_ranks, chunk), chunk_size(count, n_ranks, chunk)};
}

// What rank 0 receives from `peer` in phase 1: the peer's whole buffer, or (all-gather) its owned chunk.
std::int64_t received_bytes(Op op, std::int64_t count, int peer, int n_ranks);

void copy_range(float* target, const float* source, Range range) {
  if (target != source && range.size > 0)
    std::memcpy(target + range.begin, source + range.begin, static_cast<std::size_t>(range.size) * sizeof(float));
}

void root(Communicator& comm, Op op, const RankBuffers& b, MessageLog* log) {
  const int n = comm.size();
  const float* send = b.send[0];
  float* recv = b.recv[0];
  // Phase 1: reduce (sum arrives peer by peer) or gather (each peer's chunk is stored where it belongs).
  if (op == Op::AllGather) copy_range(recv, send, owned(b.count, 0, n));
  for (int peer = 1; peer < n; ++peer) {
    Channel& from = comm.link(peer, 0);
    if (op == Op::AllGather) {
      const Range r = owned(b.count, peer, n);
      receive_range(from, recv + r.begin, nullptr, r.size);
    } else {
      // The first peer's data is added to rank 0's input, later ones to the running sum (no separate copy).
      receive_range(from, recv, peer == 1 ? send : recv, b.count);
    }
    if (log) log->add(0, {"reduce", -1, 0, peer, received_bytes(op, b.count, peer, n), op != Op::AllGather});
  }
  // Phase 2: broadcast the whole result, or scatter each rank's owned chunk of it.
  for (int peer = 1; peer < n; ++peer) {
    const Range r = op == Op::ReduceScatter ? owned(b.count, peer, n) : whole(b.count);
    send_range(comm.link(0, peer), recv + r.begin, r.size);
    if (log) log->add(0, {"broadcast", peer, r.size * std::int64_t{sizeof(float)}, -1, 0, false});
  }
}

void peer(Communicator& comm, int rank, Op op, const RankBuffers& b, MessageLog* log) {
  const int n = comm.size();
  const Range up = op == Op::AllGather ? owned(b.count, rank, n) : whole(b.count);
  send_range(comm.link(rank, 0), b.send[rank] + up.begin, up.size);
  const Range down = op == Op::ReduceScatter ? owned(b.count, rank, n) : whole(b.count);
  receive_range(comm.link(0, rank), b.recv[rank] + down.begin, nullptr, down.size);
  if (log) {
    log->add(rank, {"reduce", 0, up.size * std::int64_t{sizeof(float)}, -1, 0, false});
    log->add(rank, {"broadcast", -1, 0, 0, down.size * std::int64_t{sizeof(float)}, false});
  }
}

std::int64_t received_bytes(Op op, std::int64_t count, int peer, int n_ranks) {
  const Range r = op == Op::AllGather ? owned(count, peer, n_ranks) : whole(count);
  return r.size * std::int64_t{sizeof(float)};
}

}  // namespace

void naive_rank(Communicator& comm, int rank, Op op, const RankBuffers& buffers, MessageLog* log) {
  if (comm.size() == 1) {
    copy_range(buffers.recv[0], buffers.send[0], whole(buffers.count));
    return;
  }
  if (rank == 0)
    root(comm, op, buffers, log);
  else
    peer(comm, rank, op, buffers, log);
}

}  // namespace dlsys::collectives
