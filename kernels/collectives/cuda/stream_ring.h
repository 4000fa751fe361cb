#pragma once
// The lab's ring between CUDA streams (included by .cu files only): gpu_ring_plan.h's steps executed as
// device-to-device copies (cudaMemcpyPeerAsync, inside one GPU when ranks are emulated there) into the neighbour's
// landing buffer and an add kernel there, events ordering the streams. The host enqueues every member's part of the
// call at once, so a call must find every member's earlier work already enqueued on its stream.
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "kernels/collectives/gpu_ring_plan.h"
#include "kernels/common/cuda/gpu_resources.h"

namespace dlsys::collectives::cuda {

// A member's ordering between streams (no timing): it reached the call; its copy of the current step was enqueued; it
// has consumed what arrived at the current step. A rank keeps its own and reuses them from call to call.
struct StreamRingEvents {
  cudaEvent_t ready = nullptr, sent = nullptr, consumed = nullptr;
};
// The three events on `device`, released with `resources`.
inline StreamRingEvents make_stream_ring_events(dlsys::cuda::Resources& resources, int device) {
  return {resources.event(device, false), resources.event(device, false), resources.event(device, false)};
}

// One rank's side of a call: the stream the ring runs on, the buffer it works in place on (`count` floats, the same
// on every member), a landing buffer of gpu_ring_landing_elements(members, count) floats and its events.
struct StreamRingMember {
  int device = 0;
  cudaStream_t stream = nullptr;
  float* buffer = nullptr;
  float* landing = nullptr;
  StreamRingEvents events;
};

// Where N ranks of a GPU path go on this machine: gpu_ring_plan.h's plan for the GPUs that answer, with NCCL when it
// is compiled. Throws RunFailure when no CUDA device answers.
GpuPlacement place_gpu_ranks(int ranks);

// Enqueues one in-place all-reduce (sum), reduce-scatter (member r keeps chunk r summed) or all-gather (member r
// brings chunk r) over `members` (rank order). Before any copy, each member's stream waits for every other member to
// reach the call, so nothing lands in a buffer still in use. Nothing with one member.
void enqueue_stream_ring(Op op, const std::vector<StreamRingMember>& members, std::int64_t count);

}  // namespace dlsys::collectives::cuda
