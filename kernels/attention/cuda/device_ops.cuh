#pragma once
// The few PTX instructions the fast attention kernels are built from (all in sm_80's set):
//   cp.async     - global -> shared copies that bypass registers and run while the block computes (LDGSTS in SASS);
//                  a copy whose source lies past the tensor fills zeros instead (src-size 0).
//   ldmatrix     - a warp loads four 8 x 8 bf16 matrices from shared memory straight into mma fragments (LDSM);
//                  .trans transposes each on the way, which is how V (keys x d, row major) becomes a B operand.
//   mma.sync     - m16n8k16, bf16 inputs, fp32 accumulators (HMMA.16816.F32.BF16).
#include <cuda_bf16.h>

#include <cstdint>

namespace dlsys::attention::cuda::ops {

__device__ __forceinline__ std::uint32_t shared_address(const void* pointer) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(pointer));
}

// 16 bytes global -> shared; when `inside` is false nothing is read and the destination becomes zeros.
__device__ __forceinline__ void cp_async_16(void* shared_dst, const void* global_src, bool inside) {
  const int src_bytes = inside ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(shared_dst)), "l"(global_src),
               "r"(src_bytes));
}
// "memory": no shared-memory access may be moved across the commit or the wait by the compiler.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Waits until at most `pending` of this thread's committed groups are still in flight.
template <int pending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(pending) : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], const void* shared_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(shared_row)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], const void* shared_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(shared_row)));
}

// c += a b for one 16 x 8 x 16 step.
__device__ __forceinline__ void mma_bf16_16816(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                               std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

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
