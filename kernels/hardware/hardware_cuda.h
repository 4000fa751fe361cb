#pragma once
// The hardware lesson's probes on GPU 0 (see hardware.h for the CPU's), on device pointers
// (kernels/common/device_buffer.h), launched on the default stream and returning at once: the caller times them with
// CUDA events and checks what they computed. Without CUDA in the build each throws RunFailure saying why.
//   chase        one thread follows a random cycle of 128-byte lines (a line's first word holds the index of the
//                next): every load waits for the one before, so the time per step is the latency of the level that
//                holds the lines (an SM's L1, the L2, or HBM).
//   read_sum     every SM reads the working set with 16-byte loads, spread so that all threads stay busy however
//                small the set: the bandwidth of the level that holds it.
//   shared_read  every block reads its own shared memory, 16-byte loads without bank conflicts, over and over: the
//                SMs' shared-memory bandwidth, against 32 banks x 4 bytes per clock per SM.
//   copies       host to device from pageable and from pinned host memory, and GPU 0 to GPU 1 where there are two.
#include <cstdint>

#include "engine/measure.h"

namespace dlsys::hardware::cuda {

inline constexpr std::int64_t kGpuLineBytes = 128;  // an L1 line; the L2 and HBM move 32-byte sectors of it
inline constexpr std::int64_t kGpuLineWords = kGpuLineBytes / 4;

// lines: count x kGpuLineWords words, lines[i * kGpuLineWords] the index of the line after line i. Follows `steps`
// links from the line *at names and writes the line it stopped at back to *at (device memory), so that calls in a
// row walk on through the cycle instead of walking again the lines the last call left in the caches.
void chase(std::uint32_t* at, const std::uint32_t* lines, std::int64_t steps);

// Blocks of read_sum's grid: `partial` holds one float per block.
int read_blocks();
// Reads x[0, n) `passes` times (n a multiple of 4, x 16-byte aligned): partial[b] = the sum block b read. The sums
// are exact for the lesson's fill (0 and 1) while each block's stays below 2^24.
void read_sum(float* partial, const float* x, std::int64_t n, std::int64_t passes);

// shared_read's grid, and what one call reads: blocks x threads x iterations x loads of 16 bytes.
std::int64_t shared_read_threads();
double shared_read_bytes(std::int64_t iterations);
// Every thread writes to sink[thread] what it summed: iterations x loads x 4 x `one`, exact below 2^24.
void shared_read(float* sink, float one, std::int64_t iterations);
// The SMs' clock the runtime reports (cudaDevAttrClockRate), MHz: shared memory's peak is 128 B per clock per SM.
double sm_clock_mhz();

// Pinned (page-locked) host memory, which the copy engines read directly; pageable memory is staged through it. The
// copies themselves are dlsys::cuda::copy_to_device (cudaMemcpy, done when it returns, from either kind).
void* pinned_allocate(std::int64_t bytes);
void pinned_free(void* host);

// GPU 0 to GPU 1 over their link (cudaMemcpyPeer, peer access on where the pair allows it), timed by CUDA events on
// GPU 0, the copy checked byte for byte. gpus < 2: nothing measured.
struct PeerCopy {
  int gpus = 0;
  bool peer_access = false;  // the pair's direct path (NVLink or PCIe peer to peer); false: staged through the host
  TimingStats time;
  bool matched = false;
};
PeerCopy peer_copy(std::int64_t bytes, const MeasureOptions& options);

}  // namespace dlsys::hardware::cuda
