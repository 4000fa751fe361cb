// The first six rungs of the fp32 ladder (row-major, c: (m, n) = a: (m, k) @ b: (k, n)), each one idea more:
//   v1_naive        - one thread per c_ij, but consecutive threads of a warp take consecutive ROWS: the 32 loads of A
//                     they issue together hit 32 different rows (32 memory transactions), B is one broadcast word,
//                     and the stores of C are 32 words n apart.
//   v2_coalesced    - the same arithmetic with consecutive threads on consecutive COLUMNS: a warp's loads of B and
//                     stores of C are 128 contiguous bytes (one transaction), its load of A a broadcast.
//   v3_smem_tiled   - a block stages 32 x 32 tiles of A and B in shared memory: each global load serves 32 FMAs.
//   v4_blocktile_1d - each thread computes 8 outputs down a column: the B value it reads from shared memory serves 8
//                     FMAs, so shared-memory traffic, not global memory, stops being the limit.
//   v5_blocktile_2d - each thread computes an 8 x 8 tile: 16 shared-memory reads feed 64 FMAs, in registers.
//   v6_vectorized   - float4 (16-byte) global loads and stores; A stored transposed in shared memory so that both
//                     of a thread's operand columns are read as float4 (LDS.128): a quarter of the instructions.
// Every kernel zero-fills the parts of its tiles past the matrix edges and writes only elements inside C, so any
// m, n, k >= 1 is right. v6 uses 16-byte accesses only when rows are 16-byte aligned (k and n multiples of 4);
// otherwise the same kernel loads and stores one float at a time.
#include "kernels/common/cuda/cuda_check.h"
#include "kernels/matmul/cuda/launchers.h"

namespace dlsys::matmul::cuda::detail {

namespace {

using Index = long long;  // element offsets: m * k can pass 2^31 for the largest shapes

// One thread's output of the first two rungs: C[row][col] as the dot product of A's row and B's column.
__device__ __forceinline__ void dot_product_output(const Shape& s, const float* a, const float* b, float* c, Index row,
                                                   Index col) {
  if (row >= s.m || col >= s.n) return;
  float sum = 0.0f;
  for (Index l = 0; l < s.k; ++l) sum += a[row * s.k + l] * b[l * s.n + col];
  c[row * s.n + col] = sum;
}

__global__ void naive_kernel(Shape s, const float* a, const float* b, float* c) {
  const Index row = Index(blockIdx.x) * kNaiveBlock + threadIdx.x;  // threadIdx.x varies fastest within a warp
  const Index col = Index(blockIdx.y) * kNaiveBlock + threadIdx.y;
  dot_product_output(s, a, b, c, row, col);
}

__global__ void coalesced_kernel(Shape s, const float* a, const float* b, float* c) {
  const Index row = Index(blockIdx.y) * kNaiveBlock + threadIdx.y;
  const Index col = Index(blockIdx.x) * kNaiveBlock + threadIdx.x;
  dot_product_output(s, a, b, c, row, col);
}

__global__ void smem_tiled_kernel(Shape s, const float* a, const float* b, float* c) {
  constexpr int kTile = kSmemTileEdge;
  // No padding needed: a warp is 32 consecutive threadIdx.x, so it writes and reads b_tile[l][0..31] (32 consecutive
  // words, 32 different banks) and reads a_tile[y][l] (one word, broadcast).
  __shared__ float a_tile[kTile][kTile];
  __shared__ float b_tile[kTile][kTile];
  const Index row = Index(blockIdx.y) * kTile + threadIdx.y;
  const Index col = Index(blockIdx.x) * kTile + threadIdx.x;
  float sum = 0.0f;
  for (Index l0 = 0; l0 < s.k; l0 += kTile) {
    const Index a_col = l0 + threadIdx.x, b_row = l0 + threadIdx.y;
    a_tile[threadIdx.y][threadIdx.x] = (row < s.m && a_col < s.k) ? a[row * s.k + a_col] : 0.0f;
    b_tile[threadIdx.y][threadIdx.x] = (b_row < s.k && col < s.n) ? b[b_row * s.n + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int l = 0; l < kTile; ++l) sum += a_tile[threadIdx.y][l] * b_tile[l][threadIdx.x];
    __syncthreads();
  }
  if (row < s.m && col < s.n) c[row * s.n + col] = sum;
}

constexpr int kThreads1d = kBlock1dM * kBlock1dN / kBlock1dTm;  // 512: one thread per column of 8 outputs

__global__ void __launch_bounds__(kThreads1d) blocktile_1d_kernel(Shape s, const float* a, const float* b, float* c) {
  constexpr int BM = kBlock1dM, BN = kBlock1dN, BK = kBlock1dK, TM = kBlock1dTm;
  static_assert(BM * BK == kThreads1d && BK * BN == kThreads1d, "one element of each tile per thread");
  __shared__ float a_tile[BM][BK];
  __shared__ float b_tile[BK][BN];
  const int t = threadIdx.x;
  const Index row0 = Index(blockIdx.y) * BM, col0 = Index(blockIdx.x) * BN;
  // A warp shares thread_row (32 consecutive t, BN = 64): its reads of a_tile are broadcasts.
  const int thread_col = t % BN, thread_row = t / BN;
  const int a_r = t / BK, a_c = t % BK, b_r = t / BN, b_c = t % BN;
  float acc[TM] = {};
  for (Index k0 = 0; k0 < s.k; k0 += BK) {
    a_tile[a_r][a_c] = (row0 + a_r < s.m && k0 + a_c < s.k) ? a[(row0 + a_r) * s.k + k0 + a_c] : 0.0f;
    b_tile[b_r][b_c] = (k0 + b_r < s.k && col0 + b_c < s.n) ? b[(k0 + b_r) * s.n + col0 + b_c] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int l = 0; l < BK; ++l) {
      const float b_value = b_tile[l][thread_col];
#pragma unroll
      for (int i = 0; i < TM; ++i) acc[i] += a_tile[thread_row * TM + i][l] * b_value;
    }
    __syncthreads();
  }
  const Index col = col0 + thread_col;
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const Index row = row0 + thread_row * TM + i;
    if (row < s.m && col < s.n) c[row * s.n + col] = acc[i];
  }
}

// One k-step of a thread's TM x TN outputs: acc += a_reg b_reg^T.
template <int TM, int TN>
__device__ __forceinline__ void add_outer_product(float (&acc)[TM][TN], const float (&a_reg)[TM],
                                                  const float (&b_reg)[TN]) {
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] += a_reg[i] * b_reg[j];
}

constexpr int kThreads2d = (kBlock2dM / kBlock2dTm) * (kBlock2dN / kBlock2dTn);  // 256

__global__ void __launch_bounds__(kThreads2d) blocktile_2d_kernel(Shape s, const float* a, const float* b, float* c) {
  constexpr int BM = kBlock2dM, BN = kBlock2dN, BK = kBlock2dK, TM = kBlock2dTm, TN = kBlock2dTn;
  static_assert((BM * BK) % kThreads2d == 0 && (BK * BN) % kThreads2d == 0, "whole loads per thread");
  __shared__ float a_tile[BM][BK];
  __shared__ float b_tile[BK][BN];
  const int t = threadIdx.x;
  const Index row0 = Index(blockIdx.y) * BM, col0 = Index(blockIdx.x) * BN;
  const int thread_row = t / (BN / TN), thread_col = t % (BN / TN);
  float acc[TM][TN] = {};
  float a_reg[TM], b_reg[TN];
  for (Index k0 = 0; k0 < s.k; k0 += BK) {
#pragma unroll
    for (int i = 0; i < BM * BK / kThreads2d; ++i) {
      const int e = t + i * kThreads2d, r = e / BK, l = e % BK;
      a_tile[r][l] = (row0 + r < s.m && k0 + l < s.k) ? a[(row0 + r) * s.k + k0 + l] : 0.0f;
    }
#pragma unroll
    for (int i = 0; i < BK * BN / kThreads2d; ++i) {
      const int e = t + i * kThreads2d, l = e / BN, col = e % BN;
      b_tile[l][col] = (k0 + l < s.k && col0 + col < s.n) ? b[(k0 + l) * s.n + col0 + col] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int l = 0; l < BK; ++l) {
#pragma unroll
      for (int i = 0; i < TM; ++i) a_reg[i] = a_tile[thread_row * TM + i][l];
#pragma unroll
      for (int j = 0; j < TN; ++j) b_reg[j] = b_tile[l][thread_col * TN + j];
      add_outer_product(acc, a_reg, b_reg);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const Index row = row0 + thread_row * TM + i, col = col0 + thread_col * TN + j;
      if (row < s.m && col < s.n) c[row * s.n + col] = acc[i][j];
    }
}

// kVector: k and n are multiples of 4, so every row of A, B and C starts 16-byte aligned and a float4 of a tile is
// either wholly inside the matrix or wholly outside it.
template <bool kVector>
__global__ void __launch_bounds__(kThreads2d) vectorized_kernel(Shape s, const float* a, const float* b, float* c) {
  constexpr int BM = kBlock2dM, BN = kBlock2dN, BK = kBlock2dK, TM = kBlock2dTm, TN = kBlock2dTn;
  static_assert(BM * BK / 4 == kThreads2d && BK * BN / 4 == kThreads2d, "one float4 of each tile per thread");
  static_assert(TM == 8 && TN == 8, "two float4 per operand column");
  __shared__ __align__(16) float a_tile_t[BK][BM];  // A transposed: a_tile_t[l][r] = A[row0 + r][k0 + l]
  __shared__ __align__(16) float b_tile[BK][BN];
  const int t = threadIdx.x;
  const Index row0 = Index(blockIdx.y) * BM, col0 = Index(blockIdx.x) * BN;
  const int thread_row = t / (BN / TN), thread_col = t % (BN / TN);
  const int a_r = t / (BK / 4), a_l = (t % (BK / 4)) * 4;  // each thread: 4 consecutive k of one row of A
  const int b_l = t / (BN / 4), b_c = (t % (BN / 4)) * 4;  // each thread: 4 consecutive columns of one row of B
  float acc[TM][TN] = {};
  for (Index k0 = 0; k0 < s.k; k0 += BK) {
    float4 av = make_float4(0, 0, 0, 0), bv = make_float4(0, 0, 0, 0);
    const Index ar = row0 + a_r, al = k0 + a_l, bl = k0 + b_l, bc = col0 + b_c;
    if constexpr (kVector) {
      if (ar < s.m && al < s.k) av = *reinterpret_cast<const float4*>(a + ar * s.k + al);
      if (bl < s.k && bc < s.n) bv = *reinterpret_cast<const float4*>(b + bl * s.n + bc);
    } else {
      float* ap = &av.x;
      float* bp = &bv.x;
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        if (ar < s.m && al + q < s.k) ap[q] = a[ar * s.k + al + q];
        if (bl < s.k && bc + q < s.n) bp[q] = b[bl * s.n + bc + q];
      }
    }
    a_tile_t[a_l + 0][a_r] = av.x;
    a_tile_t[a_l + 1][a_r] = av.y;
    a_tile_t[a_l + 2][a_r] = av.z;
    a_tile_t[a_l + 3][a_r] = av.w;
    *reinterpret_cast<float4*>(&b_tile[b_l][b_c]) = bv;
    __syncthreads();
#pragma unroll
    for (int l = 0; l < BK; ++l) {
      const float4 a0 = *reinterpret_cast<const float4*>(&a_tile_t[l][thread_row * TM]);
      const float4 a1 = *reinterpret_cast<const float4*>(&a_tile_t[l][thread_row * TM + 4]);
      const float4 b0 = *reinterpret_cast<const float4*>(&b_tile[l][thread_col * TN]);
      const float4 b1 = *reinterpret_cast<const float4*>(&b_tile[l][thread_col * TN + 4]);
      const float a_reg[TM] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float b_reg[TN] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
      add_outer_product(acc, a_reg, b_reg);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const Index row = row0 + thread_row * TM + i;
    if (row >= s.m) continue;
#pragma unroll
    for (int j = 0; j < TN; j += 4) {
      const Index col = col0 + thread_col * TN + j;
      if constexpr (kVector) {
        if (col < s.n)
          *reinterpret_cast<float4*>(c + row * s.n + col) =
              make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
      } else {
#pragma unroll
        for (int q = 0; q < 4; ++q)
          if (col + q < s.n) c[row * s.n + col + q] = acc[i][j + q];
      }
    }
  }
}

dim3 grid_for(const Shape& s, int block_m, int block_n) {
  return dim3(static_cast<unsigned>(ceil_div(s.n, block_n)), static_cast<unsigned>(ceil_div(s.m, block_m)));
}

}  // namespace

void launch_simt(Rung rung, const Shape& s, const float* a, const float* b, float* c) {
  const dim3 square(kNaiveBlock, kNaiveBlock);
  switch (rung) {
    case Rung::Naive:  // grid x over rows, y over columns: the transpose of every other rung's grid
      naive_kernel<<<dim3(static_cast<unsigned>(ceil_div(s.m, kNaiveBlock)),
                          static_cast<unsigned>(ceil_div(s.n, kNaiveBlock))),
                     square>>>(s, a, b, c);
      break;
    case Rung::Coalesced:
      coalesced_kernel<<<grid_for(s, kNaiveBlock, kNaiveBlock), square>>>(s, a, b, c);
      break;
    case Rung::SmemTiled:
      smem_tiled_kernel<<<grid_for(s, kSmemTileEdge, kSmemTileEdge), dim3(kSmemTileEdge, kSmemTileEdge)>>>(s, a, b, c);
      break;
    case Rung::Blocktile1d:
      blocktile_1d_kernel<<<grid_for(s, kBlock1dM, kBlock1dN), kThreads1d>>>(s, a, b, c);
      break;
    case Rung::Blocktile2d:
      blocktile_2d_kernel<<<grid_for(s, kBlock2dM, kBlock2dN), kThreads2d>>>(s, a, b, c);
      break;
    case Rung::Vectorized:
      if (s.k % 4 == 0 && s.n % 4 == 0)
        vectorized_kernel<true><<<grid_for(s, kBlock2dM, kBlock2dN), kThreads2d>>>(s, a, b, c);
      else
        vectorized_kernel<false><<<grid_for(s, kBlock2dM, kBlock2dN), kThreads2d>>>(s, a, b, c);
      break;
    default:
      throw RunFailure("launch_simt: not a SIMT rung");
  }
  DLSYS_CUDA_CHECK(cudaGetLastError());
}

}  // namespace dlsys::matmul::cuda::detail
