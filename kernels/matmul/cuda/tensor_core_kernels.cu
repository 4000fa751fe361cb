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
#include "kernels/matmul/cuda/tile_copy.cuh"

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

// A warp's kTilesM x kTilesN mma tiles, 16 x 8 each; (row, col) is this lane's first output of the first tile.
__device__ __forceinline__ void store_warp_tiles(const Shape& s, float* c, Index row, Index col,
                                                 const float (&acc)[kTilesM][kTilesN][4], bool pair_ok) {
#pragma unroll
  for (int mt = 0; mt < kTilesM; ++mt)
#pragma unroll
    for (int nt = 0; nt < kTilesN; ++nt) store_tile(s, c, row + mt * 16, col + nt * 8, acc[mt][nt], pair_ok);
}

// The k loop of both rungs, a kStages-deep cp.async pipeline: copy_stage(slot, k_tile) starts the copies of a k tile
// into a slot, multiply(slot) runs once that slot's tile has landed, with the next kStages - 1 tiles in flight.
// Every thread commits one group per tile, also when nothing is left to copy, so "kStages - 2 groups pending" always
// means "this tile has landed".
template <class CopyStage, class Multiply>
__device__ __forceinline__ void pipelined_k_loop(int k_tiles, const CopyStage& copy_stage, const Multiply& multiply) {
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
    multiply(tile % kStages);
  }
  ptx::cp_async_wait<0>();
}

using bf16 = __nv_bfloat16;

// What differs between the two rungs: the element, the k depth of a block's slice and of one mma, the padded rows in
// shared memory, how a warp's fragments come out of a slice, the mma and when C may be stored in pairs.
struct Tf32Mma {
  using Element = float;
  static constexpr int kK = kTf32BlockK, kMmaK = 8;
  static constexpr int kAs = kK + 4;  // A rows (k contiguous): 144 B, so 8 consecutive rows start in 8 bank quads
  static constexpr int kBs = BN + 8;  // B rows: 136 words = 8 banks apart, so lanes (q, g) read banks 8q + g
  // The fragments of k l..l+7 for this lane (lane) of the warp at (warp_m, warp_n).
  __device__ __forceinline__ static void load_fragments(const float* as, const float* bs, int l, int warp_m, int warp_n,
                                                        int lane, unsigned (&a_frag)[kTilesM][4],
                                                        unsigned (&b_frag)[kTilesN][2]) {
    const int g = lane / 4, q = lane % 4;
#pragma unroll
    for (int mt = 0; mt < kTilesM; ++mt) {
      // Lanes 0-15 address rows 0-15 at k l..l+3 (a0, a1), lanes 16-31 the same rows at k l+4..l+7 (a2, a3).
      const int r = warp_m * WM + mt * 16 + lane % 16, k = l + (lane / 16) * 4;
      ptx::ldmatrix_x4(a_frag[mt], as + r * kAs + k);
#pragma unroll
      for (int x = 0; x < 4; ++x) a_frag[mt][x] = ptx::to_tf32(a_frag[mt][x]);
    }
#pragma unroll
    for (int nt = 0; nt < kTilesN; ++nt) {
      const int col = warp_n * WN + nt * 8 + g;  // b0 = B[l + q][col], b1 = B[l + q + 4][col]
      b_frag[nt][0] = ptx::to_tf32(__float_as_uint(bs[(l + q) * kBs + col]));
      b_frag[nt][1] = ptx::to_tf32(__float_as_uint(bs[(l + q + 4) * kBs + col]));
    }
  }
  __device__ __forceinline__ static void mma(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
    ptx::mma_tf32_m16n8k8(d, a, b);
  }
  // Pairs only on the vector path (n a multiple of 4).
  __device__ __forceinline__ static bool pair_stores(const Shape&, bool vector) { return vector; }
  // Rows are 16-byte aligned when k and n are multiples of 4.
  static bool vector_rows(const Shape& s) { return s.k % 4 == 0 && s.n % 4 == 0; }
};

struct Bf16Mma {
  using Element = bf16;
  static constexpr int kK = kBf16BlockK, kMmaK = 16;
  static constexpr int kAs = kK + 8;  // A rows: 80 B, so the 8 rows of an ldmatrix start in 8 different bank quads
  static constexpr int kBs = BN + 8;  // B rows: 272 B, likewise
  // The fragments of k l..l+15 for this lane (lane) of the warp at (warp_m, warp_n).
  __device__ __forceinline__ static void load_fragments(const bf16* as, const bf16* bs, int l, int warp_m, int warp_n,
                                                        int lane, unsigned (&a_frag)[kTilesM][4],
                                                        unsigned (&b_frag)[kTilesN][2]) {
#pragma unroll
    for (int mt = 0; mt < kTilesM; ++mt) {
      // Lanes 0-15: rows 0-15 at k l..l+7 (a0, a1); lanes 16-31: the same rows at k l+8..l+15 (a2, a3).
      const int r = warp_m * WM + mt * 16 + lane % 16, k = l + (lane / 16) * 8;
      ptx::ldmatrix_x4(a_frag[mt], as + r * kAs + k);
    }
#pragma unroll
    for (int nt = 0; nt < kTilesN; nt += 2) {
      // Matrix j = lane / 8 of the four: k rows l + (j % 2) * 8 + lane % 8, columns of n tile nt + j / 2.
      // Transposed on the way, each gives a lane the (k = 2q, 2q + 1; n = g) pair of a B fragment.
      const int j = lane / 8, k = l + (j % 2) * 8 + lane % 8, col = warp_n * WN + (nt + j / 2) * 8;
      unsigned r[4];
      ptx::ldmatrix_x4_trans(r, bs + k * kBs + col);
      b_frag[nt][0] = r[0];
      b_frag[nt][1] = r[1];
      b_frag[nt + 1][0] = r[2];
      b_frag[nt + 1][1] = r[3];
    }
  }
  __device__ __forceinline__ static void mma(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
    ptx::mma_bf16_m16n8k16(d, a, b);
  }
  // Pairs wherever n is even, on either path.
  __device__ __forceinline__ static bool pair_stores(const Shape& s, bool) { return s.n % 2 == 0; }
  // Rows are 16-byte aligned when k and n are multiples of 8.
  static bool vector_rows(const Shape& s) { return s.k % 8 == 0 && s.n % 8 == 0; }
};

// Elements of one pipeline slot (A's slice, then B's) and the shared memory of all kStages slots.
template <class P>
constexpr int kStageElems = BM* P::kAs + P::kK* P::kBs;
template <class P>
constexpr int kSmemBytes = int(sizeof(typename P::Element)) * kStages* kStageElems<P>;

template <class P, bool kVector>
__global__ void __launch_bounds__(kThreads, 2)
    mma_kernel(Shape s, const typename P::Element* __restrict__ a, const typename P::Element* __restrict__ b,
               float* __restrict__ c) {
  using Element = typename P::Element;
  extern __shared__ __align__(16) unsigned char smem_bytes[];
  Element* smem = reinterpret_cast<Element*>(smem_bytes);
  const int t = threadIdx.x, warp = t / 32, lane = t % 32, g = lane / 4, q = lane % 4;
  const int warp_m = warp / kWarpsN, warp_n = warp % kWarpsN;
  const Index row0 = Index(blockIdx.y) * BM, col0 = Index(blockIdx.x) * BN;
  const int k_tiles = static_cast<int>(ceil_div(s.k, P::kK));

  auto copy_stage = [&](int slot, int k_tile) {
    Element* as = smem + slot * kStageElems<P>;
    const Index k0 = Index(k_tile) * P::kK;
    copy_tile_async<BM, P::kK, P::kAs, kThreads, kVector>(as, a, s.m, s.k, row0, k0);
    copy_tile_async<P::kK, BN, P::kBs, kThreads, kVector>(as + BM * P::kAs, b, s.k, s.n, k0, col0);
  };

  float acc[kTilesM][kTilesN][4] = {};
  pipelined_k_loop(k_tiles, copy_stage, [&](int slot) {
    const Element* as = smem + slot * kStageElems<P>;
    const Element* bs = as + BM * P::kAs;
#pragma unroll
    for (int l = 0; l < P::kK; l += P::kMmaK) {
      unsigned a_frag[kTilesM][4], b_frag[kTilesN][2];
      P::load_fragments(as, bs, l, warp_m, warp_n, lane, a_frag, b_frag);
#pragma unroll
      for (int mt = 0; mt < kTilesM; ++mt)
#pragma unroll
        for (int nt = 0; nt < kTilesN; ++nt) P::mma(acc[mt][nt], a_frag[mt], b_frag[nt]);
    }
  });
  store_warp_tiles(s, c, row0 + warp_m * WM + g, col0 + warp_n * WN + 2 * q, acc, P::pair_stores(s, kVector));
}

template <typename Kernel>
void allow_smem(Kernel kernel, int bytes) {
  DLSYS_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
}

// Both variants of the rung's kernel take over 48 KiB of shared memory, asked once; the vector one where rows allow.
template <class P>
void launch_mma(const Shape& s, const typename P::Element* a, const typename P::Element* b, float* c) {
  constexpr int bytes = kSmemBytes<P>;
  static bool allowed = (allow_smem(mma_kernel<P, true>, bytes), allow_smem(mma_kernel<P, false>, bytes), true);
  (void)allowed;
  const dim3 grid(static_cast<unsigned>(ceil_div(s.n, BN)), static_cast<unsigned>(ceil_div(s.m, BM)));
  if (P::vector_rows(s))
    mma_kernel<P, true><<<grid, kThreads, bytes>>>(s, a, b, c);
  else
    mma_kernel<P, false><<<grid, kThreads, bytes>>>(s, a, b, c);
  DLSYS_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void launch_tf32_mma(const Shape& s, const float* a, const float* b, float* c) { launch_mma<Tf32Mma>(s, a, b, c); }

void launch_bf16_mma(const Shape& s, const bf16* a, const bf16* b, float* c) { launch_mma<Bf16Mma>(s, a, b, c); }

}  // namespace dlsys::matmul::cuda::detail
