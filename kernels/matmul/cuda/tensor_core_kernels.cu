// The tensor-core rungs: the same block tiling and cp.async pipeline as v7_warptile, but each warp hands its
// multiply-adds to the tensor cores with mma.sync, which multiplies a 16 x k tile by a k x 8 tile per instruction.
//   v8_tf32_mma - m16n8k8 in tf32: the fp32 operands are rounded to tf32 (10 fraction bits, cvt.rna) as they are read
//                 into fragments, products accumulate in fp32. A's fragments come through ldmatrix (a 16-bit
//                 instruction, but a tf32 fragment of A is the same bytes as four 8 x 8 b16 tiles); B's are read one
//                 word at a time, because its fragment wants k down the registers and ldmatrix's transposition works
//                 on 16-bit elements only.
//   v9_bf16_mma - m16n8k16 in bf16: A and B were rounded to bf16 once before timing (the same operands cuBLAS gets);
//                 products accumulate in fp32. ldmatrix loads A's fragments and ldmatrix.trans B's.
// Both: 128 x 128 block tiles, 8 warps of 64 x 32, a 3-stage cp.async pipeline with zero-filled edges, rows padded
// so that the 8 row addresses of an ldmatrix (and B's word reads) fall in distinct banks. When rows are not 16-byte
// aligned (k or n not a multiple of 4 for tf32, of 8 for bf16), the same kernels copy element by element.
#include <cuda_bf16.h>

#include "kernels/common/cuda/cuda_check.h"
#include "kernels/common/cuda/ptx.cuh"
#include "kernels/matmul/cuda/launchers.h"

namespace dlsys::matmul::cuda::detail {

namespace {

namespace ptx = dlsys::cuda::ptx;

using Index = long long;

constexpr int BM = kMmaBlockM, BN = kMmaBlockN, kStages = kMmaStages;
constexpr int kWarpsM = 2, kWarpsN = 4, kThreads = 32 * kWarpsM * kWarpsN;
constexpr int WM = BM / kWarpsM, WN = BN / kWarpsN;  // 64 x 32 per warp
constexpr int kTilesM = WM / 16, kTilesN = WN / 8;   // 4 x 4 mma tiles of 16 x 8 per warp
// Two blocks per SM (128 registers a thread at most; the copy loops stay rolled so their addresses do not stay live).

// The accumulators of one 16 x 8 mma tile: lane (g = lane / 4, q = lane % 4) holds rows g and g + 8, columns 2q and
// 2q + 1. `pair_ok` says a float2 store is allowed (n even, so (row, 2q) is 8-byte aligned).
__device__ __forceinline__ void store_tile(const Shape& s, float* c, Index row, Index col, const float (&d)[4],
                                           bool pair_ok) {
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const Index r = row + half * 8;
    if (r >= s.m) continue;
    const float x = d[half * 2], y = d[half * 2 + 1];
    if (pair_ok && col + 1 < s.n) {
      *reinterpret_cast<float2*>(c + r * s.n + col) = make_float2(x, y);
    } else {
      if (col < s.n) c[r * s.n + col] = x;
      if (col + 1 < s.n) c[r * s.n + col + 1] = y;
    }
  }
}

// ---- tf32 ----
constexpr int kTf32K = kTf32BlockK;
constexpr int kTf32As = kTf32K + 4;  // A rows (k contiguous): 144 B, so 8 consecutive rows start in 8 bank quads
constexpr int kTf32Bs = BN + 8;      // B rows: 136 words = 8 banks apart, so lanes (q, g) read banks 8q + g
constexpr int kTf32StageFloats = BM * kTf32As + kTf32K * kTf32Bs;
constexpr int kTf32SmemBytes = 4 * kStages * kTf32StageFloats;

template <bool kVector>
__global__ void __launch_bounds__(kThreads, 2)
    tf32_mma_kernel(Shape s, const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c) {
  extern __shared__ __align__(16) float smem[];
  const int t = threadIdx.x, warp = t / 32, lane = t % 32, g = lane / 4, q = lane % 4;
  const int warp_m = warp / kWarpsN, warp_n = warp % kWarpsN;
  const Index row0 = Index(blockIdx.y) * BM, col0 = Index(blockIdx.x) * BN;
  const int k_tiles = static_cast<int>(ceil_div(s.k, kTf32K));

  auto copy_stage = [&](int slot, int k_tile) {
    float* as = smem + slot * kTf32StageFloats;
    float* bs = as + BM * kTf32As;
    const Index k0 = Index(k_tile) * kTf32K;
#pragma unroll 1
    for (int i = 0; i < BM * kTf32K / 4 / kThreads; ++i) {  // A: 16-byte pieces of rows
      const int e = t + i * kThreads, r = e / (kTf32K / 4), l = (e % (kTf32K / 4)) * 4;
      const Index gr = row0 + r, gl = k0 + l;
      if constexpr (kVector) {
        const bool inside = gr < s.m && gl < s.k;
        ptx::cp_async_16(as + r * kTf32As + l, inside ? a + gr * s.k + gl : a, inside);
      } else {
#pragma unroll
        for (int x = 0; x < 4; ++x) {
          const bool inside = gr < s.m && gl + x < s.k;
          ptx::cp_async_4(as + r * kTf32As + l + x, inside ? a + gr * s.k + gl + x : a, inside);
        }
      }
    }
#pragma unroll 1
    for (int i = 0; i < kTf32K * BN / 4 / kThreads; ++i) {  // B: 16-byte pieces of rows
      const int e = t + i * kThreads, l = e / (BN / 4), col = (e % (BN / 4)) * 4;
      const Index gl = k0 + l, gc = col0 + col;
      if constexpr (kVector) {
        const bool inside = gl < s.k && gc < s.n;
        ptx::cp_async_16(bs + l * kTf32Bs + col, inside ? b + gl * s.n + gc : b, inside);
      } else {
#pragma unroll
        for (int x = 0; x < 4; ++x) {
          const bool inside = gl < s.k && gc + x < s.n;
          ptx::cp_async_4(bs + l * kTf32Bs + col + x, inside ? b + gl * s.n + gc + x : b, inside);
        }
      }
    }
  };

  float acc[kTilesM][kTilesN][4] = {};
#pragma unroll
  for (int stage = 0; stage < kStages - 1; ++stage) {
    if (stage < k_tiles) copy_stage(stage, stage);
    ptx::cp_async_commit();
  }
  for (int tile = 0; tile < k_tiles; ++tile) {
    ptx::cp_async_wait<kStages - 2>();
    __syncthreads();
    const int ahead = tile + kStages - 1;
    if (ahead < k_tiles) copy_stage(ahead % kStages, ahead);
    ptx::cp_async_commit();

    const float* as = smem + (tile % kStages) * kTf32StageFloats;
    const float* bs = as + BM * kTf32As;
#pragma unroll
    for (int l = 0; l < kTf32K; l += 8) {
      unsigned a_frag[kTilesM][4], b_frag[kTilesN][2];
#pragma unroll
      for (int mt = 0; mt < kTilesM; ++mt) {
        // Lanes 0-15 address rows 0-15 at k l..l+3 (a0, a1), lanes 16-31 the same rows at k l+4..l+7 (a2, a3).
        const int r = warp_m * WM + mt * 16 + lane % 16, k = l + (lane / 16) * 4;
        ptx::ldmatrix_x4(a_frag[mt], as + r * kTf32As + k);
#pragma unroll
        for (int x = 0; x < 4; ++x) a_frag[mt][x] = ptx::to_tf32(a_frag[mt][x]);
      }
#pragma unroll
      for (int nt = 0; nt < kTilesN; ++nt) {
        const int col = warp_n * WN + nt * 8 + g;  // b0 = B[l + q][col], b1 = B[l + q + 4][col]
        b_frag[nt][0] = ptx::to_tf32(__float_as_uint(bs[(l + q) * kTf32Bs + col]));
        b_frag[nt][1] = ptx::to_tf32(__float_as_uint(bs[(l + q + 4) * kTf32Bs + col]));
      }
#pragma unroll
      for (int mt = 0; mt < kTilesM; ++mt)
#pragma unroll
        for (int nt = 0; nt < kTilesN; ++nt) ptx::mma_tf32_m16n8k8(acc[mt][nt], a_frag[mt], b_frag[nt]);
    }
  }
  ptx::cp_async_wait<0>();
#pragma unroll
  for (int mt = 0; mt < kTilesM; ++mt)
#pragma unroll
    for (int nt = 0; nt < kTilesN; ++nt)
      store_tile(s, c, row0 + warp_m * WM + mt * 16 + g, col0 + warp_n * WN + nt * 8 + 2 * q, acc[mt][nt], kVector);
}

// ---- bf16 ----
constexpr int kBf16K = kBf16BlockK;
constexpr int kBf16As = kBf16K + 8;  // A rows: 80 B, so the 8 rows of an ldmatrix start in 8 different bank quads
constexpr int kBf16Bs = BN + 8;      // B rows: 272 B, likewise
constexpr int kBf16StageElems = BM * kBf16As + kBf16K * kBf16Bs;
constexpr int kBf16SmemBytes = 2 * kStages * kBf16StageElems;
using bf16 = __nv_bfloat16;

template <bool kVector>
__global__ void __launch_bounds__(kThreads, 2)
    bf16_mma_kernel(Shape s, const bf16* __restrict__ a, const bf16* __restrict__ b, float* __restrict__ c) {
  extern __shared__ __align__(16) unsigned char smem_bytes[];
  bf16* smem = reinterpret_cast<bf16*>(smem_bytes);
  const int t = threadIdx.x, warp = t / 32, lane = t % 32, g = lane / 4, q = lane % 4;
  const int warp_m = warp / kWarpsN, warp_n = warp % kWarpsN;
  const Index row0 = Index(blockIdx.y) * BM, col0 = Index(blockIdx.x) * BN;
  const int k_tiles = static_cast<int>(ceil_div(s.k, kBf16K));
  const bf16 zero = __float2bfloat16(0.0f);

  // Aligned rows: 16-byte cp.async of 8 elements. Otherwise plain loads and stores, element by element (cp.async has
  // no 2-byte size): they complete before the barrier that precedes the slot's use, like the copies they replace.
  auto copy_stage = [&](int slot, int k_tile) {
    bf16* as = smem + slot * kBf16StageElems;
    bf16* bs = as + BM * kBf16As;
    const Index k0 = Index(k_tile) * kBf16K;
#pragma unroll 1
    for (int i = 0; i < BM * kBf16K / 8 / kThreads; ++i) {
      const int e = t + i * kThreads, r = e / (kBf16K / 8), l = (e % (kBf16K / 8)) * 8;
      const Index gr = row0 + r, gl = k0 + l;
      if constexpr (kVector) {
        const bool inside = gr < s.m && gl < s.k;
        ptx::cp_async_16(as + r * kBf16As + l, inside ? a + gr * s.k + gl : a, inside);
      } else {
#pragma unroll
        for (int x = 0; x < 8; ++x) as[r * kBf16As + l + x] = gr < s.m && gl + x < s.k ? a[gr * s.k + gl + x] : zero;
      }
    }
#pragma unroll 1
    for (int i = 0; i < kBf16K * BN / 8 / kThreads; ++i) {
      const int e = t + i * kThreads, l = e / (BN / 8), col = (e % (BN / 8)) * 8;
      const Index gl = k0 + l, gc = col0 + col;
      if constexpr (kVector) {
        const bool inside = gl < s.k && gc < s.n;
        ptx::cp_async_16(bs + l * kBf16Bs + col, inside ? b + gl * s.n + gc : b, inside);
      } else {
#pragma unroll
        for (int x = 0; x < 8; ++x) bs[l * kBf16Bs + col + x] = gl < s.k && gc + x < s.n ? b[gl * s.n + gc + x] : zero;
      }
    }
  };

  float acc[kTilesM][kTilesN][4] = {};
#pragma unroll
  for (int stage = 0; stage < kStages - 1; ++stage) {
    if (stage < k_tiles) copy_stage(stage, stage);
    ptx::cp_async_commit();
  }
  for (int tile = 0; tile < k_tiles; ++tile) {
    ptx::cp_async_wait<kStages - 2>();
    __syncthreads();
    const int ahead = tile + kStages - 1;
    if (ahead < k_tiles) copy_stage(ahead % kStages, ahead);
    ptx::cp_async_commit();

    const bf16* as = smem + (tile % kStages) * kBf16StageElems;
    const bf16* bs = as + BM * kBf16As;
#pragma unroll
    for (int l = 0; l < kBf16K; l += 16) {
      unsigned a_frag[kTilesM][4], b_frag[kTilesN][2];
#pragma unroll
      for (int mt = 0; mt < kTilesM; ++mt) {
        // Lanes 0-15: rows 0-15 at k l..l+7 (a0, a1); lanes 16-31: the same rows at k l+8..l+15 (a2, a3).
        const int r = warp_m * WM + mt * 16 + lane % 16, k = l + (lane / 16) * 8;
        ptx::ldmatrix_x4(a_frag[mt], as + r * kBf16As + k);
      }
#pragma unroll
      for (int nt = 0; nt < kTilesN; nt += 2) {
        // Matrix j = lane / 8 of the four: k rows l + (j % 2) * 8 + lane % 8, columns of n tile nt + j / 2.
        // Transposed on the way, each gives a lane the (k = 2q, 2q + 1; n = g) pair of a B fragment.
        const int j = lane / 8, k = l + (j % 2) * 8 + lane % 8, col = warp_n * WN + (nt + j / 2) * 8;
        unsigned r[4];
        ptx::ldmatrix_x4_trans(r, bs + k * kBf16Bs + col);
        b_frag[nt][0] = r[0];
        b_frag[nt][1] = r[1];
        b_frag[nt + 1][0] = r[2];
        b_frag[nt + 1][1] = r[3];
      }
#pragma unroll
      for (int mt = 0; mt < kTilesM; ++mt)
#pragma unroll
        for (int nt = 0; nt < kTilesN; ++nt) ptx::mma_bf16_m16n8k16(acc[mt][nt], a_frag[mt], b_frag[nt]);
    }
  }
  ptx::cp_async_wait<0>();
#pragma unroll
  for (int mt = 0; mt < kTilesM; ++mt)
#pragma unroll
    for (int nt = 0; nt < kTilesN; ++nt)
      store_tile(s, c, row0 + warp_m * WM + mt * 16 + g, col0 + warp_n * WN + nt * 8 + 2 * q, acc[mt][nt],
                 s.n % 2 == 0);
}

template <typename Kernel>
void allow_smem(Kernel kernel, int bytes) {
  DLSYS_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
}

dim3 mma_grid(const Shape& s) {
  return dim3(static_cast<unsigned>(ceil_div(s.n, BN)), static_cast<unsigned>(ceil_div(s.m, BM)));
}

}  // namespace

void launch_tf32_mma(const Shape& s, const float* a, const float* b, float* c) {
  static bool allowed =
      (allow_smem(tf32_mma_kernel<true>, kTf32SmemBytes), allow_smem(tf32_mma_kernel<false>, kTf32SmemBytes), true);
  (void)allowed;
  if (s.k % 4 == 0 && s.n % 4 == 0)
    tf32_mma_kernel<true><<<mma_grid(s), kThreads, kTf32SmemBytes>>>(s, a, b, c);
  else
    tf32_mma_kernel<false><<<mma_grid(s), kThreads, kTf32SmemBytes>>>(s, a, b, c);
  DLSYS_CUDA_CHECK(cudaGetLastError());
}

void launch_bf16_mma(const Shape& s, const bf16* a, const bf16* b, float* c) {
  static bool allowed =
      (allow_smem(bf16_mma_kernel<true>, kBf16SmemBytes), allow_smem(bf16_mma_kernel<false>, kBf16SmemBytes), true);
  (void)allowed;
  if (s.k % 8 == 0 && s.n % 8 == 0)
    bf16_mma_kernel<true><<<mma_grid(s), kThreads, kBf16SmemBytes>>>(s, a, b, c);
  else
    bf16_mma_kernel<false><<<mma_grid(s), kThreads, kBf16SmemBytes>>>(s, a, b, c);
  DLSYS_CUDA_CHECK(cudaGetLastError());
}

}  // namespace dlsys::matmul::cuda::detail
