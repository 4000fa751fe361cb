// The roofline lesson's kernels as CUDA kernels (see roofline_cuda.h). Pointwise kernels (STREAM, the intensity
// family) are the 16-byte grid-stride maps of vector_map.cuh; the decode GEMV reads 16 bytes of weights per lane and
// load; the peak kernel keeps several independent FMA chains per thread so each FP32 unit always has an instruction
// ready.
#include <chrono>

#include "kernels/common/cuda/block_reduce.cuh"
#include "kernels/common/cuda/cuda_check.h"
#include "kernels/common/cuda/vector_map.cuh"
#include "kernels/roofline/roofline_cuda.h"
#include "kernels/roofline/roofline_math.h"

namespace dlsys::roofline::cuda {

namespace {

using dlsys::cuda::block_reduce;
using dlsys::cuda::MaxOp;
using dlsys::cuda::SumOp;

using dlsys::cuda::map_binary;
using dlsys::cuda::map_unary;
constexpr int kThreads = 256;
constexpr int kPeakChains = 8;
constexpr int kPeakBlocksPerSm = 8;
constexpr int kSoftmaxThreads = 256;
constexpr int kWarp = 32;
constexpr int kGemvWarpsPerBlock = 8;

__device__ inline std::int64_t first_index() { return blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; }

// The STREAM kernels and the intensity family as maps of vector_map.cuh: 16-byte loads and stores, a grid that fills
// the device, several loads in flight per thread. The bandwidth they measure is the ceiling the lessons compare
// every memory-bound kernel with, so they must themselves run at the memory's speed.
struct Copy {
  __device__ float operator()(float a) const { return a; }
};
struct Scale {
  float s;
  __device__ float operator()(float c) const { return s * c; }
};
struct Add {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct Triad {
  float s;
  __device__ float operator()(float b, float c) const { return b + s * c; }
};
struct Family {
  std::int64_t k;
  float a, c;
  __device__ float operator()(float v) const {
    for (std::int64_t j = 0; j < k; ++j) v = fmaf(v, a, c);
    return v;
  }
};

__global__ void peak_kernel(float* sink, std::int64_t iterations, float a, float c) {
  float v[kPeakChains];
#pragma unroll
  for (int j = 0; j < kPeakChains; ++j) v[j] = float(threadIdx.x + j) * 1e-3f;
  for (std::int64_t it = 0; it < iterations; ++it) {
#pragma unroll
    for (int j = 0; j < kPeakChains; ++j) v[j] = fmaf(v[j], a, c);
  }
  float sum = 0;
#pragma unroll
  for (int j = 0; j < kPeakChains; ++j) sum += v[j];
  sink[first_index()] = sum;
}

// One block per row: the row's max, the sum of exp(x - max), then y = exp(x - max) / sum, each a strided pass by
// the block's threads (the row is read three times, from L2 after the first).
__global__ void softmax_kernel(float* y, const float* x, std::int64_t cols) {
  __shared__ float shared[kSoftmaxThreads];
  const float* row = x + blockIdx.x * cols;
  float* out = y + blockIdx.x * cols;
  float m = -INFINITY;
  for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, row[c]);
  m = block_reduce(m, shared, MaxOp{});
  float s = 0;
  for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += expf(row[c] - m);
  s = block_reduce(s, shared, SumOp{});
  const float inverse = 1.0f / s;
  for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) out[c] = expf(row[c] - m) * inverse;
}

__device__ inline float from_bf16(std::uint16_t half) { return __uint_as_float(std::uint32_t(half) << 16); }

__device__ inline float warp_sum(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// One warp per row: lanes read consecutive weights (coalesced), then a shuffle reduction. Where a row splits into
// whole 16-byte loads (cols a multiple of 8, pointers aligned), each lane reads 8 weights per load and keeps four
// such loads in flight; otherwise one weight at a time.
__global__ void gemv_bf16_kernel(float* y, const std::uint16_t* w, const float* x, std::int64_t rows,
                                 std::int64_t cols) {
  const std::int64_t row = blockIdx.x * std::int64_t(kGemvWarpsPerBlock) + threadIdx.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (row >= rows) return;
  const std::uint16_t* wr = w + row * cols;
  float sum = 0;
  for (std::int64_t c = lane; c < cols; c += kWarp) sum += from_bf16(wr[c]) * x[c];
  sum = warp_sum(sum);
  if (lane == 0) y[row] = sum;
}

// The 8 bf16 weights of a 16-byte load times x[8c .. 8c + 7]: the low half of each word is the even column.
__device__ inline float bf16_chunk_dot(uint4 v, const float4* x4, int c) {
  const float4 a = __ldg(x4 + 2 * c), b = __ldg(x4 + 2 * c + 1);
  float s = __uint_as_float(v.x << 16) * a.x;
  s = fmaf(__uint_as_float(v.x & 0xFFFF0000u), a.y, s);
  s = fmaf(__uint_as_float(v.y << 16), a.z, s);
  s = fmaf(__uint_as_float(v.y & 0xFFFF0000u), a.w, s);
  s = fmaf(__uint_as_float(v.z << 16), b.x, s);
  s = fmaf(__uint_as_float(v.z & 0xFFFF0000u), b.y, s);
  s = fmaf(__uint_as_float(v.w << 16), b.z, s);
  return fmaf(__uint_as_float(v.w & 0xFFFF0000u), b.w, s);
}

__global__ void gemv_bf16_vector_kernel(float* y, const std::uint16_t* w, const float* x, std::int64_t rows,
                                        std::int64_t cols) {
  constexpr int kInFlight = 4;
  const std::int64_t row = blockIdx.x * std::int64_t(kGemvWarpsPerBlock) + threadIdx.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (row >= rows) return;
  const uint4* wr = reinterpret_cast<const uint4*>(w + row * cols);
  const float4* x4 = reinterpret_cast<const float4*>(x);
  const int chunks = int(cols / 8);
  float sum = 0;
  for (int first = lane; first < chunks; first += kInFlight * kWarp) {
    uint4 v[kInFlight];
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const int c = first + u * kWarp;
      v[u] = c < chunks ? dlsys::cuda::load_once(wr + c) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const int c = first + u * kWarp;
      if (c < chunks) sum += bf16_chunk_dot(v[u], x4, c);
    }
  }
  sum = warp_sum(sum);
  if (lane == 0) y[row] = sum;
}

__global__ void empty_kernel() {}

int sm_count() {
  int device = 0, count = 0;
  DLSYS_CUDA_CHECK(cudaGetDevice(&device));
  DLSYS_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
  return count;
}

void check_launch() { DLSYS_CUDA_CHECK(cudaGetLastError()); }

// Microseconds between two events recorded around `enqueue` on `stream`.
template <typename Enqueue>
double event_us(cudaStream_t stream, Enqueue enqueue) {
  const dlsys::cuda::TimingEvents events;
  DLSYS_CUDA_CHECK(cudaEventRecord(events.start, stream));
  enqueue();
  DLSYS_CUDA_CHECK(cudaEventRecord(events.stop, stream));
  return events.elapsed_us();
}

}  // namespace

void stream_copy(float* c, const float* a, std::int64_t n) { map_unary(c, a, n, Copy{}); }
void stream_scale(float* b, const float* c, float s, std::int64_t n) { map_unary(b, c, n, Scale{s}); }
void stream_add(float* c, const float* a, const float* b, std::int64_t n) { map_binary(c, a, b, n, Add{}); }
void stream_triad(float* a, const float* b, const float* c, float s, std::int64_t n) {
  map_binary(a, b, c, n, Triad{s});
}

int fma_peak_blocks() { return sm_count() * kPeakBlocksPerSm; }
int fma_peak_chains() { return kPeakChains; }
std::int64_t fma_peak_threads() { return std::int64_t(fma_peak_blocks()) * kThreads; }

void fma_peak(float* sink, std::int64_t iterations) {
  peak_kernel<<<fma_peak_blocks(), kThreads>>>(sink, iterations, kFamilyA, kFamilyC);
  check_launch();
}

double fma_peak_flop(std::int64_t iterations) {
  return 2.0 * double(fma_peak_threads()) * kPeakChains * double(iterations);
}

void fma_family(float* y, const float* x, std::int64_t n, std::int64_t k) {
  map_unary(y, x, n, Family{k, kFamilyA, kFamilyC});
}

void softmax_rows(float* y, const float* x, std::int64_t rows, std::int64_t cols) {
  softmax_kernel<<<static_cast<unsigned>(rows), kSoftmaxThreads>>>(y, x, cols);
  check_launch();
}

void gemv_bf16(float* y, const std::uint16_t* w, const float* x, std::int64_t rows, std::int64_t cols) {
  const auto blocks = static_cast<unsigned>((rows + kGemvWarpsPerBlock - 1) / kGemvWarpsPerBlock);
  const bool whole_loads = cols % 8 == 0 && dlsys::cuda::aligned_16(w) && dlsys::cuda::aligned_16(x);
  if (whole_loads)
    gemv_bf16_vector_kernel<<<blocks, kGemvWarpsPerBlock * kWarp>>>(y, w, x, rows, cols);
  else
    gemv_bf16_kernel<<<blocks, kGemvWarpsPerBlock * kWarp>>>(y, w, x, rows, cols);
  check_launch();
}

CallCosts scale_call_costs(float* y, const float* x, std::int64_t n, int calls) {
  cudaStream_t stream = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  auto launch_all = [&] {
    for (int i = 0; i < calls; ++i) map_unary(y, x, n, Scale{kScaleFactor}, stream);
  };
  CallCosts costs;
  try {
    DLSYS_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    launch_all();  // warm-up
    check_launch();
    costs.launched_us = event_us(stream, launch_all) / calls;
    DLSYS_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    launch_all();
    DLSYS_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    DLSYS_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    DLSYS_CUDA_CHECK(cudaGraphLaunch(exec, stream));  // warm-up: the first replay uploads the graph
    DLSYS_CUDA_CHECK(cudaStreamSynchronize(stream));
    costs.graph_us = event_us(stream, [&] { DLSYS_CUDA_CHECK(cudaGraphLaunch(exec, stream)); }) / calls;
  } catch (...) {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
    if (stream) cudaStreamDestroy(stream);
    throw;
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
  return costs;
}

double empty_launch_and_wait_us(int calls) {
  empty_kernel<<<1, 1>>>();
  DLSYS_CUDA_CHECK(cudaDeviceSynchronize());
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) {
    empty_kernel<<<1, 1>>>();
    DLSYS_CUDA_CHECK(cudaDeviceSynchronize());
  }
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / calls;
}

}  // namespace dlsys::roofline::cuda
