#pragma once
// What the fast attention kernels add to the shared PTX wrappers (kernels/common/cuda/ptx.cuh, where cp.async,
// ldmatrix and mma.sync live): bf16 packing of P, row reductions within a quad, and the exp2 base of the softmax.
#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/common/cuda/ptx.cuh"

namespace dlsys::attention::cuda::ops {

using dlsys::cuda::ptx::cp_async_16;
using dlsys::cuda::ptx::cp_async_commit;
using dlsys::cuda::ptx::cp_async_wait;
using dlsys::cuda::ptx::ldmatrix_x4;
using dlsys::cuda::ptx::ldmatrix_x4_trans;
using dlsys::cuda::ptx::mma_bf16_m16n8k16;

// Two floats -> one register of two bf16, the first in the low half (the lower column in a fragment).
__device__ __forceinline__ std::uint32_t pack_bf16(float low, float high) {
  const __nv_bfloat162 pair = __floats2bfloat162_rn(low, high);
  return *reinterpret_cast<const std::uint32_t*>(&pair);
}

// Reductions across the lanes that share a row: xor partners within a group of `width` neighbouring lanes.
template <int width>
__device__ __forceinline__ float group_max(float x) {
#pragma unroll
  for (int offset = 1; offset < width; offset *= 2) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, offset));
  return x;
}
template <int width>
__device__ __forceinline__ float group_sum(float x) {
#pragma unroll
  for (int offset = 1; offset < width; offset *= 2) x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}

// log2(e): exp(x) = exp2(x log2 e), and exp2 is one MUFU instruction. Folded into the score scale.
inline constexpr float kLog2e = 1.4426950408889634f;

// The exponent base for a row's running max: a row that has seen no visible key yet (max -inf) uses 0, so that
// exp2(-inf - base) is 0 and never exp2(-inf + inf) = NaN.
__device__ __forceinline__ float safe_max(float m) { return m == -INFINITY ? 0.0f : m; }

}  // namespace dlsys::attention::cuda::ops
