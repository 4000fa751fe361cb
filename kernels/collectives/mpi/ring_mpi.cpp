// The lab's ring between processes (mpi_collectives.h). The schedule is ring_schedule.h's, step for step:
//   reduce-scatter step s: send chunk (r - s) to rank r + 1, receive chunk (r - 1 - s) from rank r - 1 and add the
//   rank's own input to it; all-gather step s: send chunk (r + 1 - s), receive chunk (r - s), stored as it lands.
// One MPI_Sendrecv per step moves the whole chunk: the receive is posted together with the send, so neither
// neighbour waits for the other to post, and a large message goes through the MPI library's fastest path in one
// piece. The incoming chunk lands straight in recv at its place; the reduction then adds in place, so partial sums
// are never copied: what is sent at step s + 1 is the chunk just reduced at step s. In place (send = recv) the
// incoming chunk lands in a chunk-sized buffer first, since its place still holds the rank's own input.
#include <mpi.h>

#include <atomic>
#include <cstring>
#include <vector>

#include "kernels/collectives/mpi/mpi_check.h"
#include "kernels/collectives/mpi/ring_hooks.h"
#include "kernels/collectives/mpi_collectives.h"
#include "kernels/collectives/ring_schedule.h"

namespace dlsys::collectives::mpi {

namespace {

// Chunks fit an int: the lesson refuses counts above INT_MAX elements with launcher=mpi.
int elements(std::int64_t count, int n, int chunk) { return static_cast<int>(chunk_size(count, n, chunk)); }

std::atomic<std::int64_t> g_bytes_sent{0}, g_bytes_received{0};

void exchange(const float* out, int out_count, float* in, int in_count, int next, int prev) {
  check(MPI_Sendrecv(out, out_count, MPI_FLOAT, next, 0, in, in_count, MPI_FLOAT, prev, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE),
        "MPI_Sendrecv");
  g_bytes_sent.fetch_add(std::int64_t(out_count) * 4, std::memory_order_relaxed);
  g_bytes_received.fetch_add(std::int64_t(in_count) * 4, std::memory_order_relaxed);
}

// The recorded run only: the contributors mask of the chunk sent, beside it.
std::uint64_t exchange_mask(RingHooks* hooks, int out_chunk, int next, int prev) {
  if (!hooks) return 0;
  std::uint64_t out = hooks->mask_to_send(out_chunk), in = 0;
  check(MPI_Sendrecv(&out, 1, MPI_UINT64_T, next, 1, &in, 1, MPI_UINT64_T, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
        "MPI_Sendrecv");
  return in;
}

// target += mine, in place; the compiler vectorises it.
void add_in_place(float* __restrict target, const float* __restrict mine, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) target[i] += mine[i];
}

}  // namespace

std::int64_t ring_bytes_sent() { return g_bytes_sent.load(std::memory_order_relaxed); }
std::int64_t ring_bytes_received() { return g_bytes_received.load(std::memory_order_relaxed); }

void ring(Op op, const float* send, float* recv, std::int64_t count) {
  ring_with_hooks(op, send, recv, count, nullptr);
}

void ring_with_hooks(Op op, const float* send, float* recv, std::int64_t count, RingHooks* hooks) {
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const auto at = [&](float* base, int chunk) { return base + chunk_begin(count, n, chunk); };
  const auto at_const = [&](const float* base, int chunk) { return base + chunk_begin(count, n, chunk); };
  if (n == 1) {
    if (count > 0 && send != recv) std::memcpy(recv, send, static_cast<std::size_t>(count) * sizeof(float));
    return;
  }
  const int next = next_rank(rank, n), prev = prev_rank(rank, n);
  // In place, a received chunk cannot land where the rank's own input of it still waits to be added: it lands here.
  const bool in_place = send == recv;
  std::vector<float> incoming(in_place && op != Op::AllGather ? std::size_t(chunk_size(count, n, 0)) : 0);
  if (op != Op::AllGather) {
    for (int s = 0; s < n - 1; ++s) {
      const int out = reduce_scatter_send_chunk(rank, s, n), in = reduce_scatter_recv_chunk(rank, s, n);
      // Step 0 sends the rank's own input; later steps the partial sum reduced at the step before.
      const float* source = s == 0 ? at_const(send, out) : at(recv, out);
      const std::uint64_t mask = exchange_mask(hooks, out, next, prev);
      if (in_place) {  // the rank's own input of chunk `in` is still in place: the incoming partial sum is added to it
        exchange(source, elements(count, n, out), incoming.data(), elements(count, n, in), next, prev);
        add_in_place(at(recv, in), incoming.data(), chunk_size(count, n, in));
      } else {
        exchange(source, elements(count, n, out), at(recv, in), elements(count, n, in), next, prev);
        add_in_place(at(recv, in), at_const(send, in), chunk_size(count, n, in));
      }
      if (hooks) hooks->stepped("reduce_scatter", s, out, in, mask, at(recv, in));
    }
  } else {
    const int mine = owned_chunk(rank, n);  // the rank's contribution starts in its send buffer
    if (chunk_size(count, n, mine) > 0 && !in_place)
      std::memcpy(at(recv, mine), at_const(send, mine), static_cast<std::size_t>(chunk_size(count, n, mine)) * 4);
  }
  if (op == Op::ReduceScatter) return;
  for (int s = 0; s < n - 1; ++s) {
    const int out = all_gather_send_chunk(rank, s, n), in = all_gather_recv_chunk(rank, s, n);
    const std::uint64_t mask = exchange_mask(hooks, out, next, prev);
    exchange(at(recv, out), elements(count, n, out), at(recv, in), elements(count, n, in), next, prev);
    if (hooks) hooks->stepped("all_gather", s, out, in, mask, at(recv, in));
  }
}

}  // namespace dlsys::collectives::mpi
