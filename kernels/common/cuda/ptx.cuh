#pragma once
// The few PTX instructions the fast kernels (matmul's upper rungs, FlashAttention on the tensor cores) are built
// from, each wrapped once (all in sm_80's set):
//   cp.async  - a copy from global to shared memory that skips the registers and runs while the block computes
//               (LDGSTS in SASS); a source size of 0 reads nothing and writes zeros (the padding of edge tiles).
//   ldmatrix  - a warp loads four 8 x 8 tiles of 16-bit words from shared memory straight into the fragment layout
//               mma.sync expects (LDSM); .trans transposes each on the way, which turns row-major K x N data into
//               a column-major B operand.
//   mma.sync  - one warp multiplies a 16 x k tile by a k x 8 tile on the tensor cores with fp32 accumulators
//               (HMMA.1688.F32.TF32, HMMA.16816.F32.BF16).
#include <cuda_bf16.h>

#include <cstdint>

namespace dlsys::cuda::ptx {

__device__ __forceinline__ unsigned smem_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// 16 bytes through L2 only: the data is staged in shared memory, so an L1 copy would be a second one for nothing.
__device__ __forceinline__ void cp_async_16(void* smem, const void* global, bool in_bounds) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_address(smem)), "l"(global),
               "r"(in_bounds ? 16 : 0));
}
// 4 bytes: one float, for copies that transpose or that cannot be 16-byte aligned.
__device__ __forceinline__ void cp_async_4(void* smem, const void* global, bool in_bounds) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_address(smem)), "l"(global),
               "r"(in_bounds ? 4 : 0));
}
// 8 bytes: a pair of floats (a quantized segment's scale and zero point).
__device__ __forceinline__ void cp_async_8(void* smem, const void* global) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(smem_address(smem)), "l"(global));
}
// The memory clobbers keep the compiler from moving ordinary shared-memory reads across the commit and the wait.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Waits until at most `pending` of this thread's committed groups are still in flight.
template <int pending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(pending) : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_address(smem_row)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_address(smem_row)));
}

// fp32 bits rounded to the nearest tf32 (10 fraction bits), ties away from zero: what the tensor cores read.
__device__ __forceinline__ unsigned to_tf32(unsigned fp32_bits) {
  unsigned out;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(out) : "f"(__uint_as_float(fp32_bits)));
  return out;
}

// d += a b for a 16 x 8 tile of fp32 accumulators: a 16 x 8 tf32 (4 registers), b 8 x 8 tf32 (2 registers).
__device__ __forceinline__ void mma_tf32_m16n8k8(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
// d += a b for a 16 x 8 tile of fp32 accumulators: a 16 x 16 bf16 (4 registers of 2), b 16 x 8 bf16 (b0, b1).
__device__ __forceinline__ void mma_bf16_m16n8k16(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void mma_bf16_m16n8k16(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  mma_bf16_m16n8k16(d, a, b[0], b[1]);
}

}  // namespace dlsys::cuda::ptx
