#pragma once
// The ring's bookkeeping, shared by the CPU ranks, the CUDA ring and the lesson's step-through (host and device):
// how a buffer of `count` elements is cut into one chunk per rank, and which chunk each rank sends at each step.
//
// Steps are counted from 0 here (s = 0..N-2); the lesson's screens count them from 1 (k = s + 1 = 1..N-1).
// Reduce-scatter, step s: rank r sends chunk (r - s) mod N to rank r+1, which adds it to its own copy.
// After N-1 steps rank r holds chunk (r + 1) mod N fully reduced (its "owned" chunk).
// All-gather, step s: rank r sends chunk (r + 1 - s) mod N to rank r+1, which stores it.
#include <cstdint>

#include "kernels/common/host_device.h"

namespace dlsys::collectives {

DLSYS_HOST_DEVICE constexpr int mod(int a, int n) { return ((a % n) + n) % n; }

// Chunks differ by at most one element when count is not divisible by N: the first count % N chunks get one more.
// With count < N the last chunks are empty (0 elements); they still travel, as empty messages, to keep the protocol.
DLSYS_HOST_DEVICE constexpr std::int64_t chunk_begin(std::int64_t count, int n_ranks, int chunk) {
  const std::int64_t base = count / n_ranks, extra = count % n_ranks;
  return chunk * base + (chunk < extra ? chunk : extra);
}
DLSYS_HOST_DEVICE constexpr std::int64_t chunk_size(std::int64_t count, int n_ranks, int chunk) {
  return chunk_begin(count, n_ranks, chunk + 1) - chunk_begin(count, n_ranks, chunk);
}

DLSYS_HOST_DEVICE constexpr int next_rank(int rank, int n_ranks) { return mod(rank + 1, n_ranks); }
DLSYS_HOST_DEVICE constexpr int prev_rank(int rank, int n_ranks) { return mod(rank - 1, n_ranks); }

DLSYS_HOST_DEVICE constexpr int reduce_scatter_send_chunk(int rank, int step, int n_ranks) {
  return mod(rank - step, n_ranks);
}
// What rank r receives at step s is what rank r-1 sends then.
DLSYS_HOST_DEVICE constexpr int reduce_scatter_recv_chunk(int rank, int step, int n_ranks) {
  return reduce_scatter_send_chunk(prev_rank(rank, n_ranks), step, n_ranks);
}
DLSYS_HOST_DEVICE constexpr int owned_chunk(int rank, int n_ranks) { return mod(rank + 1, n_ranks); }
DLSYS_HOST_DEVICE constexpr int all_gather_send_chunk(int rank, int step, int n_ranks) {
  return mod(rank + 1 - step, n_ranks);
}
DLSYS_HOST_DEVICE constexpr int all_gather_recv_chunk(int rank, int step, int n_ranks) {
  return all_gather_send_chunk(prev_rank(rank, n_ranks), step, n_ranks);
}

// Elements rank r sends to rank r+1 in one all-reduce (its reduce-scatter chunks, then its all-gather chunks).
constexpr std::int64_t ring_all_reduce_elements_sent(int rank, int n_ranks, std::int64_t count) {
  std::int64_t elements = 0;
  for (int s = 0; s < n_ranks - 1; ++s)
    elements += chunk_size(count, n_ranks, reduce_scatter_send_chunk(rank, s, n_ranks)) +
                chunk_size(count, n_ranks, all_gather_send_chunk(rank, s, n_ranks));
  return elements;
}

// Large chunks travel as segments of at most `segment_elements`, so the receiver reduces one segment while the sender
// copies the next. An empty chunk is still one (empty) segment.
DLSYS_HOST_DEVICE constexpr std::int64_t segment_count(std::int64_t elements, std::int64_t segment_elements) {
  return elements == 0 ? 1 : (elements + segment_elements - 1) / segment_elements;
}

}  // namespace dlsys::collectives
