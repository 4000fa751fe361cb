// Ring reduce-scatter and all-gather on CPU ranks (the schedule is in ring_schedule.h).
//   Reduce-scatter: N-1 steps; at each, a rank sends one chunk to its right neighbour and adds the chunk arriving from
//   its left one into its own. All-gather: N-1 steps moving the finished chunks the same way, copying instead of
//   adding. All-reduce is one then the other.
//
// Fused steps (as NCCL's primitives do): what a rank receives at step s is exactly what it must send at step s+1, so
// it adds the incoming chunk to its own input and writes the sum straight into its outgoing message; each step is one
// pass over memory instead of a receive pass and a send pass. A rank's program is therefore: send its first chunk,
// then N-2 "receive, reduce, send", one "receive, reduce, store (and send, for all-reduce)", then for all-gather N-2
// "receive, store, send" and one "receive, store".
//
// Pipelining: chunks travel in segments, and a rank runs its whole program on segment 0 of every chunk, then on
// segment 1, and so on, so every link carries data at once and a neighbour reduces segment k while the rank sends
// segment k+1. Why this cannot deadlock with 2+ slots per link: each rank has sent at most one message more than it
// has received (two at the ragged last segment, hence 4 slots), so not every link can be full at once; and a rank
// waiting for input waits on a neighbour that is strictly behind it in the program, which cannot go round the ring.
#include <algorithm>
#include <cstring>

#include "kernels/collectives/collectives.h"
#include "kernels/collectives/cpu/streaming_stores.h"
#include "kernels/collectives/step_record.h"

namespace dlsys::collectives {

namespace {

enum class Action {
  Send,             // send own data (the first step's send)
  ReduceSend,       // receive, add own input, send the sum on
  ReduceStore,      // receive, add own input, keep the sum (the owned chunk, reduce-scatter's result)
  ReduceStoreSend,  // the same, and send it on (all-reduce: the first all-gather send)
  StoreSend,        // receive a finished chunk, keep it, send it on
  Store,            // receive a finished chunk, keep it
};

struct Primitive {
  Action action;
  int chunk;               // the chunk this primitive moves
  const char* phase = "";  // the step whose receive this is, for the record
  int step = -1;
};

bool receives(Action a) { return a != Action::Send; }
bool sends(Action a) {
  return a == Action::Send || a == Action::ReduceSend || a == Action::ReduceStoreSend || a == Action::StoreSend;
}

// The rank's program, in order; chunk numbers from ring_schedule.h.
std::vector<Primitive> ring_program(Op op, int rank, int n) {
  std::vector<Primitive> program;
  if (op != Op::AllGather) {
    program.push_back({Action::Send, reduce_scatter_send_chunk(rank, 0, n)});
    for (int s = 0; s < n - 1; ++s) {
      const bool last = s == n - 2;
      const Action a = !last ? Action::ReduceSend : op == Op::AllReduce ? Action::ReduceStoreSend : Action::ReduceStore;
      program.push_back({a, reduce_scatter_recv_chunk(rank, s, n), "reduce_scatter", s});
    }
  } else {
    program.push_back({Action::Send, all_gather_send_chunk(rank, 0, n)});
  }
  if (op != Op::ReduceScatter)
    for (int s = 0; s < n - 1; ++s)
      program.push_back(
          {s == n - 2 ? Action::Store : Action::StoreSend, all_gather_recv_chunk(rank, s, n), "all_gather", s});
  return program;
}

// ReduceSend's sum goes only to the neighbour, through the cache. No __restrict: in place, `mine` is the target
// array elsewhere (same index, so vectorising stays correct).
void add(float* out, const float* mine, const float* incoming, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) out[i] = mine[i] + incoming[i];
}

void copy_floats(float* target, const float* source, std::int64_t count) {
  if (target != source && count > 0) std::memcpy(target, source, static_cast<std::size_t>(count) * sizeof(float));
}

}  // namespace

void ring_rank(Communicator& comm, int rank, Op op, const RankBuffers& buffers, StepRecorder* recorder) {
  const int n = comm.size();
  const float* send = buffers.send[rank];
  float* recv = buffers.recv[rank];
  const std::int64_t count = buffers.count;
  const std::int64_t segment = comm.segment_elements();
  if (recorder) recorder->start(rank, send);
  if (n == 1) {  // nothing to exchange: the result is the rank's own input
    copy_floats(recv, send, count);
    return;
  }
  if (op == Op::AllGather) {  // the rank's contribution starts in its send buffer
    const int mine = owned_chunk(rank, n);
    copy_floats(recv + chunk_begin(count, n, mine), send + chunk_begin(count, n, mine), chunk_size(count, n, mine));
  }
  Channel& to_next = comm.link(rank, next_rank(rank, n));
  Channel& from_prev = comm.link(prev_rank(rank, n), rank);
  const std::vector<Primitive> program = ring_program(op, rank, n);
  const std::int64_t segments = segment_count(chunk_size(count, n, 0), segment);  // chunk 0 is the largest

  for (std::int64_t k = 0; k < segments; ++k) {
    for (std::size_t p = 0; p < program.size(); ++p) {
      const Primitive& prim = program[p];
      const std::int64_t size = chunk_size(count, n, prim.chunk);
      if (k >= segment_count(size, segment)) continue;  // this chunk has fewer segments (ragged sizes)
      const std::int64_t offset = chunk_begin(count, n, prim.chunk) + k * segment;
      const std::int64_t m = std::min(segment, size - k * segment);  // 0 for an empty chunk

      if (prim.action == Action::Send) {
        const float* source = op == Op::AllGather ? recv : send;
        to_next.send(source + offset, m, recorder ? recorder->contributors(rank, prim.chunk) : 0);
        continue;
      }
      const Message in = from_prev.receive();
      float* out = sends(prim.action) ? to_next.acquire() : nullptr;
      const float* result = nullptr;  // where the received chunk's new values are
      switch (prim.action) {
        case Action::ReduceSend:
          add(out, send + offset, in.data, m);
          result = out;
          break;
        case Action::ReduceStore:
        case Action::ReduceStoreSend:
          detail::add_results(recv + offset, out, send + offset, in.data, m);
          result = recv + offset;
          break;
        case Action::StoreSend:
        case Action::Store:
          detail::copy_results(recv + offset, out, in.data, m);
          result = recv + offset;
          break;
        case Action::Send:
          break;
      }
      // The record (tiny runs, one segment per chunk) is written before the send so the mask sent is the new one.
      if (recorder && receives(prim.action))
        recorder->record(rank, prim.phase, prim.step, program[p - 1].chunk, prim.chunk, in.contributors, result);
      if (out) to_next.post(m, recorder ? recorder->contributors(rank, prim.chunk) : 0);
      from_prev.release();
    }
  }
}

}  // namespace dlsys::collectives
