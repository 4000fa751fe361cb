#pragma once
// Memory-bound maps over fp32 arrays, written so that their time follows their bytes on a GPU:
//   - 16-byte accesses (float4: LDG.E.128 / STG.E.128) when every pointer is 16-byte aligned, plain floats otherwise,
//     and the last n % 4 elements one per thread;
//   - a grid sized to the device (every SM's resident blocks, not one block per 256 elements), each thread walking
//     the array with a grid stride and holding kMapUnroll independent loads in flight before it uses the first;
//   - a bias broadcast over rows indexed by row and column, the column advanced by the stride with one compare per
//     step instead of a 64-bit modulo per element.
// `f` is a device function object: f(x) for map_unary, f(x, b) for map_binary and map_broadcast_rows.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/common/cuda/cuda_check.h"

namespace dlsys::cuda {

inline constexpr int kMapThreads = 256;
inline constexpr int kMapBlocksPerSm = 8;  // 2048 threads: an SM's limit when the kernel needs at most 32 registers
inline constexpr int kMapUnroll = 4;       // 16-byte loads per thread in flight (per input array)

// Blocks for `items` work items of one thread each: one full set of resident blocks on every SM at most.
inline unsigned map_blocks(std::int64_t items) {
  int device = 0, sms = 0;
  DLSYS_CUDA_CHECK(cudaGetDevice(&device));
  DLSYS_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const std::int64_t full = std::int64_t(std::max(sms, 1)) * kMapBlocksPerSm;
  const std::int64_t wanted = (items + kMapThreads - 1) / kMapThreads;
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min(full, wanted)));
}

inline bool aligned_16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// Loads of data read once (a GEMV's weights, their scales), through the read-only path without a place in L1, so
// they do not push out what is read again (the vector x). 16 bytes, or one float that L1 may keep briefly (a scale
// shared by the lanes of a warp and by the next loads of a row) but evicts first.
__device__ inline uint4 load_once(const uint4* p) {
  uint4 v;
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p));
  return v;
}
__device__ inline float load_once(const float* p) {
  float v;
  asm("ld.global.nc.L1::evict_first.f32 %0, [%1];" : "=f"(v) : "l"(p));
  return v;
}

namespace map_detail {

template <typename F>
__device__ inline float4 apply(const F& f, float4 a) {
  return make_float4(f(a.x), f(a.y), f(a.z), f(a.w));
}
template <typename F>
__device__ inline float apply(const F& f, float a) {
  return f(a);
}
template <typename F>
__device__ inline float4 apply(const F& f, float4 a, float4 b) {
  return make_float4(f(a.x, b.x), f(a.y, b.y), f(a.z, b.z), f(a.w, b.w));
}
template <typename F>
__device__ inline float apply(const F& f, float a, float b) {
  return f(a, b);
}

__device__ inline std::int64_t first_thread() { return blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; }
__device__ inline std::int64_t thread_count() { return std::int64_t(gridDim.x) * blockDim.x; }

// y = f(x) over `items` values of V (float4 or float) from the start, then elements [tail_from, n) one per thread.
template <typename V, typename F>
__global__ void __launch_bounds__(kMapThreads)
    unary_kernel(float* __restrict__ y, const float* __restrict__ x, std::int64_t items, std::int64_t tail_from,
                 std::int64_t n, F f) {
  const V* xv = reinterpret_cast<const V*>(x);
  V* yv = reinterpret_cast<V*>(y);
  const std::int64_t stride = thread_count();
  std::int64_t i = first_thread();
  for (; i + (kMapUnroll - 1) * stride < items; i += kMapUnroll * stride) {
    V in[kMapUnroll];
#pragma unroll
    for (int u = 0; u < kMapUnroll; ++u) in[u] = __ldg(xv + i + u * stride);
#pragma unroll
    for (int u = 0; u < kMapUnroll; ++u) yv[i + u * stride] = apply(f, in[u]);
  }
  for (; i < items; i += stride) yv[i] = apply(f, __ldg(xv + i));
  for (std::int64_t j = tail_from + first_thread(); j < n; j += stride) y[j] = f(__ldg(x + j));
}

template <typename V, typename F>
__global__ void __launch_bounds__(kMapThreads)
    binary_kernel(float* __restrict__ y, const float* __restrict__ x, const float* __restrict__ b, std::int64_t items,
                  std::int64_t tail_from, std::int64_t n, F f) {
  const V* xv = reinterpret_cast<const V*>(x);
  const V* bv = reinterpret_cast<const V*>(b);
  V* yv = reinterpret_cast<V*>(y);
  const std::int64_t stride = thread_count();
  std::int64_t i = first_thread();
  for (; i + (kMapUnroll - 1) * stride < items; i += kMapUnroll * stride) {
    V in_x[kMapUnroll], in_b[kMapUnroll];
#pragma unroll
    for (int u = 0; u < kMapUnroll; ++u) {
      in_x[u] = __ldg(xv + i + u * stride);
      in_b[u] = __ldg(bv + i + u * stride);
    }
#pragma unroll
    for (int u = 0; u < kMapUnroll; ++u) yv[i + u * stride] = apply(f, in_x[u], in_b[u]);
  }
  for (; i < items; i += stride) yv[i] = apply(f, __ldg(xv + i), __ldg(bv + i));
  for (std::int64_t j = tail_from + first_thread(); j < n; j += stride) y[j] = f(__ldg(x + j), __ldg(b + j));
}

// y[r][c] = f(x[r][c], b[c]) with x, y: (rows, cols) seen as `items` values of V and cols_v values of V per row. Each
// thread's column starts at its index mod cols_v (one division per thread) and moves by stride mod cols_v per step.
template <typename V, typename F>
__global__ void __launch_bounds__(kMapThreads)
    broadcast_rows_kernel(float* __restrict__ y, const float* __restrict__ x, const float* __restrict__ b,
                          std::int64_t items, std::int64_t cols_v, F f) {
  const V* xv = reinterpret_cast<const V*>(x);
  const V* bv = reinterpret_cast<const V*>(b);
  V* yv = reinterpret_cast<V*>(y);
  const std::int64_t stride = thread_count();
  const std::int64_t step = stride % cols_v;
  std::int64_t i = first_thread();
  std::int64_t col = i % cols_v;
  auto advance = [&](std::int64_t c) {
    c += step;
    return c >= cols_v ? c - cols_v : c;
  };
  for (; i + (kMapUnroll - 1) * stride < items; i += kMapUnroll * stride) {
    V in_x[kMapUnroll], in_b[kMapUnroll];
    std::int64_t c = col;
#pragma unroll
    for (int u = 0; u < kMapUnroll; ++u) {
      in_x[u] = __ldg(xv + i + u * stride);
      in_b[u] = __ldg(bv + c);
      c = advance(c);
    }
#pragma unroll
    for (int u = 0; u < kMapUnroll; ++u) yv[i + u * stride] = apply(f, in_x[u], in_b[u]);
    col = c;
  }
  for (; i < items; i += stride, col = advance(col)) yv[i] = apply(f, __ldg(xv + i), __ldg(bv + col));
}

}  // namespace map_detail

// y[i] = f(x[i]) for i < n, on `stream`.
template <typename F>
void map_unary(float* y, const float* x, std::int64_t n, F f, cudaStream_t stream = nullptr) {
  if (n <= 0) return;
  if (aligned_16(y) && aligned_16(x)) {
    const std::int64_t items = n / 4;
    map_detail::unary_kernel<float4>
        <<<map_blocks(std::max<std::int64_t>(items, 1)), kMapThreads, 0, stream>>>(y, x, items, 4 * items, n, f);
  } else {
    map_detail::unary_kernel<float><<<map_blocks(n), kMapThreads, 0, stream>>>(y, x, n, n, n, f);
  }
  DLSYS_CUDA_CHECK(cudaGetLastError());
}

// y[i] = f(x[i], b[i]) for i < n.
template <typename F>
void map_binary(float* y, const float* x, const float* b, std::int64_t n, F f, cudaStream_t stream = nullptr) {
  if (n <= 0) return;
  if (aligned_16(y) && aligned_16(x) && aligned_16(b)) {
    const std::int64_t items = n / 4;
    map_detail::binary_kernel<float4>
        <<<map_blocks(std::max<std::int64_t>(items, 1)), kMapThreads, 0, stream>>>(y, x, b, items, 4 * items, n, f);
  } else {
    map_detail::binary_kernel<float><<<map_blocks(n), kMapThreads, 0, stream>>>(y, x, b, n, n, n, f);
  }
  DLSYS_CUDA_CHECK(cudaGetLastError());
}

// y[r][c] = f(x[r][c], b[c]) for x, y: (rows, cols) row-major and b: (cols).
template <typename F>
void map_broadcast_rows(float* y, const float* x, const float* b, std::int64_t rows, std::int64_t cols, F f,
                        cudaStream_t stream = nullptr) {
  if (rows <= 0 || cols <= 0) return;
  const std::int64_t n = rows * cols;
  if (cols % 4 == 0 && aligned_16(y) && aligned_16(x) && aligned_16(b)) {
    map_detail::broadcast_rows_kernel<float4>
        <<<map_blocks(n / 4), kMapThreads, 0, stream>>>(y, x, b, n / 4, cols / 4, f);
  } else {
    map_detail::broadcast_rows_kernel<float><<<map_blocks(n), kMapThreads, 0, stream>>>(y, x, b, n, cols, f);
  }
  DLSYS_CUDA_CHECK(cudaGetLastError());
}

}  // namespace dlsys::cuda
