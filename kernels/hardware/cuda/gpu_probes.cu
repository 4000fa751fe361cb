// The hardware lesson's probes as CUDA kernels (see hardware_cuda.h).
#include <vector>

#include "kernels/common/cuda/block_reduce.cuh"
#include "kernels/common/cuda/cuda_check.h"
#include "kernels/hardware/hardware_cuda.h"

namespace dlsys::hardware::cuda {

namespace {

using dlsys::cuda::block_reduce;
using dlsys::cuda::SumOp;

// The read stream: a full SM's worth of threads (8 x 256), each with several 16-byte loads in flight, so that the
// bytes on their way cover HBM's latency (about 3.35 TB/s x 0.6 us = 2 MB over 132 SMs on an H100).
constexpr int kReadThreads = 256;
constexpr int kReadBlocksPerSm = 8;
// Shared memory: 32 KiB per block, 4 blocks of 512 threads per SM, 8 independent 16-byte loads per iteration at
// 8 different addresses (offsets that wrap onto each other would be one load to the compiler, and count twice).
constexpr int kSharedThreads = 512;
constexpr int kSharedBlocksPerSm = 4;
constexpr int kSharedVectors = 2048;  // float4s: 32 KiB, a power of two so an index wraps with a mask
constexpr int kSharedLoads = 8;
constexpr int kSharedLoadStride = kSharedVectors / kSharedLoads;  // load l reads float4 at + l x this, mod the array
static_assert(kSharedLoadStride * kSharedLoads == kSharedVectors && kSharedLoadStride % 32 == 0,
              "eight different addresses, each warp's 32 float4s unsplit by the wrap");

__global__ void chase_kernel(std::uint32_t* at, const std::uint32_t* lines, std::int64_t steps) {
  std::uint32_t line = *at;
  for (std::int64_t s = 0; s < steps; ++s) line = lines[std::size_t(line) * kGpuLineWords];
  *at = line;
}

// Item g of the call's passes x n4 float4s is x[g mod n4]; a thread's items are `threads` apart, so the index moves
// by threads mod n4 and wraps with one subtraction instead of a division per load.
__global__ void read_kernel(float* partial, const float4* x, std::int64_t n4, std::int64_t items) {
  const std::int64_t threads = std::int64_t(gridDim.x) * blockDim.x;
  const std::int64_t first = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t step = threads % n4;
  std::int64_t at = first % n4;
  float4 sum = make_float4(0, 0, 0, 0);
#pragma unroll 4
  for (std::int64_t g = first; g < items; g += threads) {
    const float4 v = x[at];
    sum.x += v.x;
    sum.y += v.y;
    sum.z += v.z;
    sum.w += v.w;
    at += step;
    if (at >= n4) at -= n4;
  }
  __shared__ float scratch[kReadThreads];
  const float block_sum = block_reduce(sum.x + sum.y + sum.z + sum.w, scratch, SumOp{});
  if (threadIdx.x == 0) partial[blockIdx.x] = block_sum;
}

// A warp's 32 lanes read 32 consecutive float4s (512 B: each quarter-warp covers all 32 banks once), and warps start
// on multiples of 32, so a wrap at the array's end never splits one: no bank conflicts.
__global__ void shared_kernel(float* sink, float one, std::int64_t iterations) {
  __shared__ float4 vectors[kSharedVectors];
  for (int i = threadIdx.x; i < kSharedVectors; i += blockDim.x) vectors[i] = make_float4(one, one, one, one);
  __syncthreads();
  float4 sum = make_float4(0, 0, 0, 0);
  unsigned at = threadIdx.x;
  for (std::int64_t it = 0; it < iterations; ++it) {
#pragma unroll
    for (int l = 0; l < kSharedLoads; ++l) {
      const float4 v = vectors[(at + unsigned(l * kSharedLoadStride)) & (kSharedVectors - 1)];
      sum.x += v.x;
      sum.y += v.y;
      sum.z += v.z;
      sum.w += v.w;
    }
    at += 32;
  }
  sink[std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x] = sum.x + sum.y + sum.z + sum.w;
}

int attribute(cudaDeviceAttr what) {
  int device = 0, value = 0;
  DLSYS_CUDA_CHECK(cudaGetDevice(&device));
  DLSYS_CUDA_CHECK(cudaDeviceGetAttribute(&value, what, device));
  return value;
}

int shared_blocks() { return attribute(cudaDevAttrMultiProcessorCount) * kSharedBlocksPerSm; }

void check_launch() { DLSYS_CUDA_CHECK(cudaGetLastError()); }

}  // namespace

void chase(std::uint32_t* at, const std::uint32_t* lines, std::int64_t steps) {
  chase_kernel<<<1, 1>>>(at, lines, steps);
  check_launch();
}

int read_blocks() { return attribute(cudaDevAttrMultiProcessorCount) * kReadBlocksPerSm; }

void read_sum(float* partial, const float* x, std::int64_t n, std::int64_t passes) {
  const std::int64_t n4 = n / 4;
  read_kernel<<<read_blocks(), kReadThreads>>>(partial, reinterpret_cast<const float4*>(x), n4, n4 * passes);
  check_launch();
}

std::int64_t shared_read_threads() { return std::int64_t(shared_blocks()) * kSharedThreads; }

double shared_read_bytes(std::int64_t iterations) {
  return double(shared_read_threads()) * double(iterations) * kSharedLoads * double(sizeof(float4));
}

void shared_read(float* sink, float one, std::int64_t iterations) {
  shared_kernel<<<shared_blocks(), kSharedThreads>>>(sink, one, iterations);
  check_launch();
}

double sm_clock_mhz() { return attribute(cudaDevAttrClockRate) / 1e3; }

void* pinned_allocate(std::int64_t bytes) {
  void* host = nullptr;
  DLSYS_CUDA_CHECK(cudaMallocHost(&host, std::size_t(bytes)));
  return host;
}

void pinned_free(void* host) { cudaFreeHost(host); }

PeerCopy peer_copy(std::int64_t bytes, const MeasureOptions& options) {
  PeerCopy result;
  DLSYS_CUDA_CHECK(cudaGetDeviceCount(&result.gpus));
  if (result.gpus < 2) return result;
  int can_access = 0;
  DLSYS_CUDA_CHECK(cudaDeviceCanAccessPeer(&can_access, 0, 1));
  result.peer_access = can_access != 0;
  DLSYS_CUDA_CHECK(cudaSetDevice(0));
  if (result.peer_access) {
    const cudaError_t enabled = cudaDeviceEnablePeerAccess(1, 0);
    if (enabled == cudaErrorPeerAccessAlreadyEnabled)
      cudaGetLastError();  // enabled by an earlier run: clear the sticky error and go on
    else
      DLSYS_CUDA_CHECK(enabled);
  }
  constexpr unsigned char kPattern = 0x5A;
  dlsys::cuda::DeviceArray<unsigned char> source{static_cast<std::size_t>(bytes)};
  DLSYS_CUDA_CHECK(cudaMemset(source.get(), kPattern, std::size_t(bytes)));
  DLSYS_CUDA_CHECK(cudaSetDevice(1));
  dlsys::cuda::DeviceArray<unsigned char> target{static_cast<std::size_t>(bytes)};
  DLSYS_CUDA_CHECK(cudaMemset(target.get(), 0, std::size_t(bytes)));
  DLSYS_CUDA_CHECK(cudaDeviceSynchronize());
  DLSYS_CUDA_CHECK(cudaSetDevice(0));
  result.time = dlsys::cuda::time_with_events(
      [&] { DLSYS_CUDA_CHECK(cudaMemcpyPeerAsync(target.get(), 1, source.get(), 0, std::size_t(bytes), nullptr)); },
      options);
  std::vector<unsigned char> landed(static_cast<std::size_t>(bytes));
  DLSYS_CUDA_CHECK(cudaMemcpy(landed.data(), target.get(), std::size_t(bytes), cudaMemcpyDeviceToHost));
  result.matched = true;
  for (unsigned char b : landed) result.matched = result.matched && b == kPattern;
  return result;
}

}  // namespace dlsys::hardware::cuda
