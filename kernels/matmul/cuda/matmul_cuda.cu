// CUDA matmul variants (row-major fp32, c: (m, n) = a: (m, k) @ b: (k, n)).
//   v1_naive      - one thread per c_ij; every thread streams its own row of A and column of B from global memory.
//   v2_smem_tiled - a block computes a kTile x kTile tile of C; tiles of A and B are staged in shared memory so
//                   each global load serves kTile multiply-adds instead of one.
//   v3_cublas     - cublasSgemm. cuBLAS is column-major: computing C^T = B^T A^T in its terms gives row-major C.
#include "kernels/common/cuda/cuda_check.h"
#include "kernels/matmul/matmul_cuda.h"

namespace dlsys::matmul::cuda {

namespace {

constexpr int kTile = kSmemTile;

__global__ void v1_naive_kernel(Shape s, const float* a, const float* b, float* c) {
  const std::int64_t row = blockIdx.y * blockDim.y + threadIdx.y;
  const std::int64_t col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= s.m || col >= s.n) return;
  float sum = 0.0f;
  for (std::int64_t l = 0; l < s.k; ++l) sum += a[row * s.k + l] * b[l * s.n + col];
  c[row * s.n + col] = sum;
}

__global__ void v2_smem_tiled_kernel(Shape s, const float* a, const float* b, float* c) {
  // No padding needed: a warp is 32 consecutive threadIdx.x, so it writes and reads b_tile[l][0..31] (32 consecutive
  // words, 32 different banks) and reads a_tile[y][l] (one word, broadcast). Padding would only matter for a
  // column-wise access such as b_tile[threadIdx.x][l].
  __shared__ float a_tile[kTile][kTile];
  __shared__ float b_tile[kTile][kTile];
  const std::int64_t row = blockIdx.y * kTile + threadIdx.y;
  const std::int64_t col = blockIdx.x * kTile + threadIdx.x;
  float sum = 0.0f;
  for (std::int64_t l0 = 0; l0 < s.k; l0 += kTile) {
    const std::int64_t a_col = l0 + threadIdx.x, b_row = l0 + threadIdx.y;
    a_tile[threadIdx.y][threadIdx.x] = (row < s.m && a_col < s.k) ? a[row * s.k + a_col] : 0.0f;
    b_tile[threadIdx.y][threadIdx.x] = (b_row < s.k && col < s.n) ? b[b_row * s.n + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int l = 0; l < kTile; ++l) sum += a_tile[threadIdx.y][l] * b_tile[l][threadIdx.x];
    __syncthreads();
  }
  if (row < s.m && col < s.n) c[row * s.n + col] = sum;
}

}  // namespace

TimingStats run(Variant variant, const Shape& s, const float* a, const float* b, float* c,
                const MeasureOptions& options) {
  using dlsys::cuda::DeviceArray;
  DeviceArray<float> d_a(s.m * s.k), d_b(s.k * s.n), d_c(s.m * s.n);
  DLSYS_CUDA_CHECK(cudaMemcpy(d_a.get(), a, d_a.bytes(), cudaMemcpyHostToDevice));
  DLSYS_CUDA_CHECK(cudaMemcpy(d_b.get(), b, d_b.bytes(), cudaMemcpyHostToDevice));
  const dim3 block(kTile, kTile);
  const dim3 grid(static_cast<unsigned>(ceil_div(s.n, kTile)), static_cast<unsigned>(ceil_div(s.m, kTile)));
  TimingStats stats;
  if (variant == Variant::Cublas) {
    cublasHandle_t handle = nullptr;
    DLSYS_CUDA_CHECK(cublasCreate(&handle));
    const float one = 1.0f, zero = 0.0f;
    try {
      // Plain fp32 (the default, said explicitly): no TF32 tensor cores, so cuBLAS meets the same error bound.
      DLSYS_CUDA_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
      // Row-major A (m x k, row stride k) read column-major is A^T (k x m, ld k); likewise B -> B^T (n x k, ld n)
      // and C -> C^T (n x m, ld n). So ask cuBLAS for C^T = B^T A^T: dimensions (n, m, k), B first.
      stats = dlsys::cuda::time_with_events(
          [&] {
            DLSYS_CUDA_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, int(s.n), int(s.m), int(s.k), &one,
                                         d_b.get(), int(s.n), d_a.get(), int(s.k), &zero, d_c.get(), int(s.n)));
          },
          options);
    } catch (...) {
      cublasDestroy(handle);
      throw;
    }
    cublasDestroy(handle);
  } else {
    stats = dlsys::cuda::time_with_events(
        [&] {
          if (variant == Variant::Naive)
            v1_naive_kernel<<<grid, block>>>(s, d_a.get(), d_b.get(), d_c.get());
          else
            v2_smem_tiled_kernel<<<grid, block>>>(s, d_a.get(), d_b.get(), d_c.get());
          DLSYS_CUDA_CHECK(cudaGetLastError());
        },
        options);
  }
  DLSYS_CUDA_CHECK(cudaMemcpy(c, d_c.get(), d_c.bytes(), cudaMemcpyDeviceToHost));
  return stats;
}

}  // namespace dlsys::matmul::cuda
