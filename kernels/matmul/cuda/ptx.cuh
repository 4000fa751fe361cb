#pragma once
// The few PTX instructions the ladder's upper rungs use, each wrapped once (sm_80 and later):
//   cp.async       - a copy from global to shared memory that skips the registers and runs in the background;
//                    a source size of 0 writes zeros instead (the edge tiles' padding), reading nothing.
//   ldmatrix       - a warp loads 8 x 8 tiles of 16-bit words from shared memory straight into the fragment layout
//                    mma.sync expects (.trans delivers them transposed).
//   mma.sync       - one warp multiplies a 16 x k tile by a k x 8 tile on the tensor cores, fp32 accumulation.
#include <cuda_bf16.h>

#include <cstdint>

namespace dlsys::matmul::cuda::ptx {

__device__ __forceinline__ unsigned smem_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// 16 bytes (through L2 only: the data is staged in shared memory, so L1 would hold a second copy for nothing).
__device__ __forceinline__ void cp_async_16(void* smem, const void* global, bool in_bounds) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_address(smem)), "l"(global),
               "r"(in_bounds ? 16 : 0));
}
// 4 bytes: one float, for copies that transpose or that cannot be 16-byte aligned.
__device__ __forceinline__ void cp_async_4(void* smem, const void* global, bool in_bounds) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_address(smem)), "l"(global),
               "r"(in_bounds ? 4 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
// Waits until at most `pending` of this thread's committed groups are still in flight.
template <int pending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(pending));
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
// d += a b for a 16 x 8 tile of fp32 accumulators: a 16 x 16 bf16 (4 registers of 2), b 16 x 8 bf16 (2 of 2).
__device__ __forceinline__ void mma_bf16_m16n8k16(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

}  // namespace dlsys::matmul::cuda::ptx
