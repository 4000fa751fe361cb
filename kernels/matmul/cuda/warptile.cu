// v7_warptile: the last fp32 rung, a template over its tile shape (WarpTile in tile_math.h) so the benchmark can sweep
// shapes in one run. What it adds to v6_vectorized:
//   - warp tiles: a block's bm x bn tile is split into wm x wn tiles, one per warp, and each thread's tm x tn outputs
//     are (tm/4) x (tn/4) groups of 4 x 4 spread across its warp's tile. Neighbouring lanes then read neighbouring
//     16-byte words of shared memory (no bank conflicts, many lanes served by one broadcast), and a warp's operands
//     come from a small, compact region.
//   - a cp.async pipeline `stages` deep: copies of the next k-slices run in the background while this one is
//     multiplied, and skip the registers. A goes through 4-byte copies that transpose it on the way (cp.async copies
//     bytes as they lie, so a 16-byte copy could not turn a row of A into a column); B through 16-byte copies.
//   - register fragments double-buffered: the operands of k-step l + 1 are read from shared memory while the FMAs of
//     step l run.
//   - shared-memory rows padded by 4 floats: 16-byte aligned for LDS.128, and the transposing stores of A, which
//     walk down a column, spread over more banks.
//   - __launch_bounds__ with the block's thread count, so the compiler budgets registers for exactly that block.
// Edges: copies past the matrix's edge write zeros (cp.async with source size 0); stores are guarded. When n is not a
// multiple of 4, B's rows are not 16-byte aligned, and the same kernel copies B and stores C one float at a time.
#include <string>
#include <utility>

#include "kernels/common/cuda/cuda_check.h"
#include "kernels/matmul/cuda/launchers.h"
#include "kernels/matmul/cuda/ptx.cuh"

namespace dlsys::matmul::cuda::detail {

namespace {

using Index = long long;

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES>
struct Tile {
  static constexpr WarpTile shape{BM, BN, BK, WM, WN, TM, TN, STAGES};
  static_assert(shape.valid(), "a warp tile whose divisibility the kernel relies on");
  static constexpr int kThreads = shape.threads();
  // Two blocks per SM: while one waits at its barrier the other's warps keep the FMA pipes busy. For 256 threads that
  // caps registers at 128 per thread (64 accumulators, 32 fragment registers, the rest addresses), without spills.
  static constexpr int kMinBlocks = 2;
};

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, bool kVectorB>
__global__ void __launch_bounds__(Tile<BM, BN, BK, WM, WN, TM, TN, STAGES>::kThreads,
                                  Tile<BM, BN, BK, WM, WN, TM, TN, STAGES>::kMinBlocks)
    warptile_kernel(Shape s, const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c) {
  using T = Tile<BM, BN, BK, WM, WN, TM, TN, STAGES>;
  constexpr WarpTile W = T::shape;
  constexpr int kThreads = T::kThreads, LM = W.lanes_m(), LN = W.lanes_n();
  constexpr int AS = W.a_row_floats(), BS = W.b_row_floats(), kStage = W.stage_floats();
  extern __shared__ __align__(16) float smem[];  // stages x [A^T: BK x AS][B: BK x BS]

  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  const int warp_m = warp / (BN / WN), warp_n = warp % (BN / WN);
  const int lane_m = lane / LN, lane_n = lane % LN;
  const Index row0 = Index(blockIdx.y) * BM, col0 = Index(blockIdx.x) * BN;
  const int k_tiles = static_cast<int>(ceil_div(s.k, BK));

  auto copy_stage = [&](int slot, int k_tile) {
    float* a_t = smem + slot * kStage;
    float* b_s = a_t + BK * AS;
    const Index k0 = Index(k_tile) * BK;
    // Not unrolled: an unrolled copy loop keeps every copy's address live across the whole k loop, and those
    // registers are what the accumulators need.
#pragma unroll 1
    for (int i = 0; i < W.a_copies_per_thread(); ++i) {
      // Consecutive threads take consecutive k of one row: the warp's global reads are contiguous runs.
      const int e = t + i * kThreads, r = e / BK, l = e % BK;
      const bool inside = row0 + r < s.m && k0 + l < s.k;
      ptx::cp_async_4(a_t + l * AS + r, inside ? a + (row0 + r) * s.k + k0 + l : a, inside);
    }
#pragma unroll 1
    for (int i = 0; i < W.b_copies_per_thread(); ++i) {
      const int e = t + i * kThreads, l = e / (BN / 4), col = (e % (BN / 4)) * 4;
      const Index gl = k0 + l, gc = col0 + col;
      if constexpr (kVectorB) {
        const bool inside = gl < s.k && gc < s.n;  // n % 4 == 0: the 4 floats are all inside or all outside
        ptx::cp_async_16(b_s + l * BS + col, inside ? b + gl * s.n + gc : b, inside);
      } else {
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const bool inside = gl < s.k && gc + q < s.n;
          ptx::cp_async_4(b_s + l * BS + col + q, inside ? b + gl * s.n + gc + q : b, inside);
        }
      }
    }
  };

  float acc[TM][TN] = {};
  float a_frag[2][TM], b_frag[2][TN];

  // Prologue: the first STAGES - 1 k-slices in flight. Every thread commits exactly one group per slice, also when
  // there is nothing left to copy, so "wait until STAGES - 2 groups remain" always means "slice `tile` has landed".
#pragma unroll
  for (int stage = 0; stage < STAGES - 1; ++stage) {
    if (stage < k_tiles) copy_stage(stage, stage);
    ptx::cp_async_commit();
  }
  for (int tile = 0; tile < k_tiles; ++tile) {
    ptx::cp_async_wait<STAGES - 2>();
    // Makes every thread's copies of slice `tile` visible, and tells every thread that all others have finished
    // multiplying slice tile - 1, whose slot the copy below reuses.
    __syncthreads();
    const int ahead = tile + STAGES - 1;
    if (ahead < k_tiles) copy_stage(ahead % STAGES, ahead);
    ptx::cp_async_commit();

    const float* a_t = smem + (tile % STAGES) * kStage + warp_m * WM + lane_m * 4;
    const float* b_s = smem + (tile % STAGES) * kStage + BK * AS + warp_n * WN + lane_n * 4;
    auto load_fragments = [&](int buffer, int l) {
#pragma unroll
      for (int g = 0; g < TM / 4; ++g) {
        const float4 v = *reinterpret_cast<const float4*>(a_t + l * AS + g * LM * 4);
        a_frag[buffer][g * 4 + 0] = v.x;
        a_frag[buffer][g * 4 + 1] = v.y;
        a_frag[buffer][g * 4 + 2] = v.z;
        a_frag[buffer][g * 4 + 3] = v.w;
      }
#pragma unroll
      for (int h = 0; h < TN / 4; ++h) {
        const float4 v = *reinterpret_cast<const float4*>(b_s + l * BS + h * LN * 4);
        b_frag[buffer][h * 4 + 0] = v.x;
        b_frag[buffer][h * 4 + 1] = v.y;
        b_frag[buffer][h * 4 + 2] = v.z;
        b_frag[buffer][h * 4 + 3] = v.w;
      }
    };
    load_fragments(0, 0);
#pragma unroll
    for (int l = 0; l < BK; ++l) {
      if (l + 1 < BK) load_fragments((l + 1) % 2, l + 1);
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a_frag[l % 2][i] * b_frag[l % 2][j];
    }
  }
  ptx::cp_async_wait<0>();  // only empty groups can remain; leave none behind

  // Output (i, j) of this thread: row group i / 4 and column group j / 4 of its warp tile.
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const Index row = row0 + warp_m * WM + (i / 4) * LM * 4 + lane_m * 4 + i % 4;
    if (row >= s.m) continue;
#pragma unroll
    for (int h = 0; h < TN / 4; ++h) {
      const Index col = col0 + warp_n * WN + h * LN * 4 + lane_n * 4;
      if constexpr (kVectorB) {
        if (col < s.n)
          *reinterpret_cast<float4*>(c + row * s.n + col) =
              make_float4(acc[i][h * 4], acc[i][h * 4 + 1], acc[i][h * 4 + 2], acc[i][h * 4 + 3]);
      } else {
#pragma unroll
        for (int q = 0; q < 4; ++q)
          if (col + q < s.n) c[row * s.n + col + q] = acc[i][h * 4 + q];
      }
    }
  }
}

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, bool kVectorB>
void launch_one(const Shape& s, const float* a, const float* b, float* c) {
  constexpr WarpTile W = Tile<BM, BN, BK, WM, WN, TM, TN, STAGES>::shape;
  auto kernel = warptile_kernel<BM, BN, BK, WM, WN, TM, TN, STAGES, kVectorB>;
  // Over 48 KiB of dynamic shared memory needs the kernel's consent, asked once per kernel.
  static const cudaError_t allowed =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, W.smem_bytes());
  DLSYS_CUDA_CHECK(allowed);
  const dim3 grid(static_cast<unsigned>(ceil_div(s.n, W.bn)), static_cast<unsigned>(ceil_div(s.m, W.bm)));
  kernel<<<grid, W.threads(), W.smem_bytes()>>>(s, a, b, c);
}

template <int I>
void launch_config(const Shape& s, const float* a, const float* b, float* c) {
  constexpr WarpTile W = kWarpTiles[I];
  if (s.n % 4 == 0)
    launch_one<W.bm, W.bn, W.bk, W.wm, W.wn, W.tm, W.tn, W.stages, true>(s, a, b, c);
  else
    launch_one<W.bm, W.bn, W.bk, W.wm, W.wn, W.tm, W.tn, W.stages, false>(s, a, b, c);
}

template <std::size_t... I>
void launch_by_index(int config, const Shape& s, const float* a, const float* b, float* c, std::index_sequence<I...>) {
  ((config == int(I) ? launch_config<int(I)>(s, a, b, c) : void()), ...);
}

}  // namespace

void launch_warptile(int config, const Shape& s, const float* a, const float* b, float* c) {
  if (config < 0 || config >= int(kWarpTiles.size()))
    throw RunFailure("warp tile configuration " + std::to_string(config) + " does not exist");
  launch_by_index(config, s, a, b, c, std::make_index_sequence<kWarpTiles.size()>{});
  DLSYS_CUDA_CHECK(cudaGetLastError());
}

}  // namespace dlsys::matmul::cuda::detail
