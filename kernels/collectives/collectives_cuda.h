#pragma once
// Collectives on GPUs, callable from code that never includes a CUDA header. Without CUDA in the
// build, or where the CUDA library cannot be loaded, each call throws RunFailure saying why (cuda/*_calls.cpp).
//   ring - the project's own ring: the same schedule as the CPU ranks (ring_schedule.h); each step copies one chunk
//          to the right neighbour's scratch (cudaMemcpyPeerAsync between GPUs) and an add kernel reduces it there.
//   nccl - ncclAllReduce / ncclReduceScatter / ncclAllGather, one communicator per GPU in one process
//          (ncclCommInitAll). NCCL refuses two ranks on one GPU, so it needs one GPU per rank.
// Placement: with at least N GPUs each rank has its own GPU. With fewer, the ring's N ranks are emulated on device 0
// as N buffers and N streams, and the result says so (`emulated`).
#include <cstdint>
#include <string>
#include <vector>

#include "engine/measure.h"
#include "kernels/collectives/op.h"

namespace dlsys::collectives::cuda {

enum class Implementation { Ring, Nccl };

struct Placement {
  int devices = 0;        // GPUs the ranks use
  bool emulated = false;  // several ranks share device 0
  std::string description;
};
// How `n_ranks` ranks sit on the GPUs this process sees. Throws RunFailure when no device answers.
Placement place_ranks(int n_ranks);
// Whether NCCL was compiled in.
bool nccl_compiled();

struct GpuMeasurement {
  TimingStats time;  // per call, CUDA events on rank 0's stream around all ranks' work
  Placement placement;
};

// Fills every rank's send buffer with input_value(rank, i) on the device, runs `op` (options.warmup untimed calls,
// then options.repeats timed), then one checked call on poisoned outputs whose results are copied to `results`
// (n_ranks host arrays of `count` floats) for the caller to check with count_wrong (reference.h). Device memory is
// freed on every path; CUDA and NCCL errors become RunFailure with the library's message; a request NCCL cannot
// serve (two ranks on one GPU, a size it cannot split) is BadInput.
GpuMeasurement measure(Op op, Implementation implementation, int n_ranks, std::int64_t count,
                       const MeasureOptions& options, const std::vector<float*>& results);

// The ceiling the ring is compared with: bytes per second one rank can move to its neighbour. Between GPUs, a peer
// copy device 0 -> device 1; with emulated ranks, a device-to-device copy within device 0 (GB/s, 1e9).
double copy_bandwidth_gbps(int n_ranks, std::int64_t bytes);

}  // namespace dlsys::collectives::cuda
