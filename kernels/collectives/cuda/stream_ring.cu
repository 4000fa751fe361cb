// The lab's ring between CUDA streams (see stream_ring.h).
#include "engine/errors.h"
#include "kernels/collectives/collectives_cuda.h"
#include "kernels/collectives/cuda/stream_ring.h"
#include "kernels/common/cuda/cuda_check.h"
#include "kernels/common/cuda/device_status.h"
#include "kernels/common/cuda/launch.h"

namespace dlsys::collectives::cuda {

namespace {

// target += incoming: the ring's reduction of a chunk that arrived.
__global__ void ring_add_kernel(float* target, const float* incoming, std::int64_t count) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x)
    target[i] += incoming[i];
}

// One step: every member sends one range of its buffer to its neighbour, into the neighbour's landing buffer (then
// added in place) or straight into the same range of its buffer. A sender first waits until its neighbour has
// consumed the previous step's arrival (the landing buffer is free again, and a range about to be overwritten has
// been sent on).
void ring_step(const std::vector<RingTransfer>& step, bool first, const std::vector<StreamRingMember>& members) {
  for (const RingTransfer& t : step) {  // sends
    const StreamRingMember& me = members[std::size_t(t.from)];
    const StreamRingMember& next = members[std::size_t(t.to)];
    DLSYS_CUDA_CHECK(cudaSetDevice(me.device));
    if (!first) DLSYS_CUDA_CHECK(cudaStreamWaitEvent(me.stream, next.events.consumed, 0));
    float* target = t.reduce ? next.landing : next.buffer + t.begin;
    if (t.size > 0)
      DLSYS_CUDA_CHECK(cudaMemcpyPeerAsync(target, next.device, me.buffer + t.begin, me.device,
                                           std::size_t(t.size) * sizeof(float), me.stream));
    DLSYS_CUDA_CHECK(cudaEventRecord(me.events.sent, me.stream));
  }
  for (const RingTransfer& t : step) {  // receives: each member is the target of exactly one transfer per step
    const StreamRingMember& me = members[std::size_t(t.to)];
    const StreamRingMember& prev = members[std::size_t(t.from)];
    DLSYS_CUDA_CHECK(cudaSetDevice(me.device));
    DLSYS_CUDA_CHECK(cudaStreamWaitEvent(me.stream, prev.events.sent, 0));
    if (t.reduce && t.size > 0) {
      ring_add_kernel<<<dlsys::cuda::grid_stride_blocks(t.size), dlsys::cuda::kGridStrideThreads, 0, me.stream>>>(
          me.buffer + t.begin, me.landing, t.size);
      DLSYS_CUDA_CHECK(cudaGetLastError());
    }
    DLSYS_CUDA_CHECK(cudaEventRecord(me.events.consumed, me.stream));
  }
}

}  // namespace

void enqueue_stream_ring(Op op, const std::vector<StreamRingMember>& members, std::int64_t count) {
  const int n = int(members.size());
  if (n < 2) return;
  for (const StreamRingMember& m : members) {
    DLSYS_CUDA_CHECK(cudaSetDevice(m.device));
    DLSYS_CUDA_CHECK(cudaEventRecord(m.events.ready, m.stream));
  }
  for (const StreamRingMember& m : members) {
    DLSYS_CUDA_CHECK(cudaSetDevice(m.device));
    for (const StreamRingMember& other : members)
      if (&other != &m) DLSYS_CUDA_CHECK(cudaStreamWaitEvent(m.stream, other.events.ready, 0));
  }
  bool first = true;
  for (const std::vector<RingTransfer>& step : gpu_ring_steps(op, n, count)) {
    ring_step(step, first, members);
    first = false;
  }
}

GpuPlacement place_gpu_ranks(int ranks) {
  const int devices = dlsys::cuda::count_visible_devices();
  if (devices < 1) throw RunFailure("no CUDA device answers: " + dlsys::cuda::device_status().reason);
  return plan_gpu_placement(ranks, devices, nccl_compiled());
}

}  // namespace dlsys::collectives::cuda
