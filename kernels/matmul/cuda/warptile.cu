// v7_warptile: the last fp32 rung, a template over its tile shape (WarpTile in tile_math.h) so the benchmark can sweep
// shapes in one run. What it adds to v6_vectorized:
//   - warp tiles: a block's bm x bn tile is split into wm x wn tiles, one per warp, and each thread's tm x tn outputs
//     are (tm/4) x (tn/4) groups of 4 x 4 spread across its warp's tile. Neighbouring lanes then read neighbouring
//     16-byte words of shared memory (no bank conflicts, many lanes served by one broadcast), and a warp's operands
//     come from a small, compact region.
//   - a cp.async pipeline `stages` deep: copies of the next k-slices run in the background while this one is
//     multiplied, and skip the registers. B goes through 16-byte copies. A must be transposed on the way (cp.async
//     copies bytes as they lie, so a 16-byte copy could not turn a row of A into a column), and takes one of two
//     paths: 4-byte copies, one per element (a_regs = 0); or 16-byte global loads into registers, issued before this
//     slice's FMAs and stored transposed into shared memory after them (a_regs = 1), so the loads' latency hides
//     behind the FMAs with a quarter of the instructions.
//   - larger thread tiles (8 x 16, 16 x 8): 128 FMAs per 6 shared-memory reads instead of 64 per 4, at the price of
//     one block per SM. Which shape wins depends on the device, so the lesson times each at the run's shape and keeps
//     the fastest (autotuned, as vendor libraries choose among their tile shapes).
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
#include "kernels/common/cuda/ptx.cuh"
#include "kernels/matmul/cuda/launchers.h"
#include "kernels/matmul/cuda/tile_copy.cuh"

namespace dlsys::matmul::cuda::detail {

namespace {

namespace ptx = dlsys::cuda::ptx;

using Index = long long;

// One k-step's operands of a thread: N / 4 float4 words of shared memory, `stride` floats apart, into N registers.
template <int N>
__device__ __forceinline__ void load_float4_groups(float (&frag)[N], const float* words, int stride) {
#pragma unroll
  for (int g = 0; g < N / 4; ++g) {
    const float4 v = *reinterpret_cast<const float4*>(words + g * stride);
    frag[g * 4 + 0] = v.x;
    frag[g * 4 + 1] = v.y;
    frag[g * 4 + 2] = v.z;
    frag[g * 4 + 3] = v.w;
  }
}

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int AREG>
struct Tile {
  static constexpr WarpTile shape{BM, BN, BK, WM, WN, TM, TN, STAGES, AREG};
  static_assert(shape.valid(), "a warp tile whose divisibility the kernel relies on");
  static constexpr int kThreads = shape.threads();
  // 8 x 8 outputs: two blocks per SM, so while one waits at its barrier the other's warps keep the FMA pipes busy; for
  // 256 threads that caps registers at 128 per thread (64 accumulators, 32 fragment registers, the rest addresses).
  // 8 x 16 or 16 x 8: one block, up to 255 registers (128 accumulators, 48 fragment registers).
  static constexpr int kMinBlocks = shape.blocks_per_sm();
};

// kVector: n % 4 == 0 (B and C by 16 bytes) and, when A goes through registers, k % 4 == 0 (A by 16 bytes).
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int AREG, bool kVectorB>
__global__ void __launch_bounds__(Tile<BM, BN, BK, WM, WN, TM, TN, STAGES, AREG>::kThreads,
                                  Tile<BM, BN, BK, WM, WN, TM, TN, STAGES, AREG>::kMinBlocks)
    warptile_kernel(Shape s, const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c) {
  using T = Tile<BM, BN, BK, WM, WN, TM, TN, STAGES, AREG>;
  constexpr WarpTile W = T::shape;
  constexpr int kThreads = T::kThreads, LM = W.lanes_m(), LN = W.lanes_n();
  constexpr int AS = W.a_row_floats(), BS = W.b_row_floats(), kStage = W.stage_floats();
  extern __shared__ __align__(16) float smem[];  // stages x [A^T: BK x AS][B: BK x BS]

  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  const int warp_m = warp / (BN / WN), warp_n = warp % (BN / WN);
  const int lane_m = lane / LN, lane_n = lane % LN;
  const Index row0 = Index(blockIdx.y) * BM, col0 = Index(blockIdx.x) * BN;
  const int k_tiles = static_cast<int>(ceil_div(s.k, BK));

  // A through registers: each thread loads a_copies_per_thread() runs of 4 consecutive k of one row (two or four
  // threads per row, so a warp reads whole 32-byte sectors), and stores each run down a column of A^T. With rows of
  // AS = bm + 4 floats, the 32 stores of one column index land in 32 different banks for bk = 8.
  constexpr int kALoads = AREG ? W.a_copies_per_thread() : 1;
  float4 a_next[kALoads];
  auto load_a = [&](int k_tile) {
    const Index k0 = Index(k_tile) * BK;
#pragma unroll
    for (int i = 0; i < kALoads; ++i) {
      const int e = t + i * kThreads, r = e / (BK / 4), l = (e % (BK / 4)) * 4;
      const Index gr = row0 + r, gk = k0 + l;
      if constexpr (kVectorB) {  // k % 4 == 0: the 4 floats are all inside or all outside, and 16-byte aligned
        a_next[i] = gr < s.m && gk < s.k ? __ldg(reinterpret_cast<const float4*>(a + gr * s.k + gk))
                                         : make_float4(0.f, 0.f, 0.f, 0.f);
      } else {
        float v[4];
#pragma unroll
        for (int q = 0; q < 4; ++q) v[q] = gr < s.m && gk + q < s.k ? __ldg(a + gr * s.k + gk + q) : 0.f;
        a_next[i] = make_float4(v[0], v[1], v[2], v[3]);
      }
    }
  };
  auto store_a = [&](int slot) {
    float* a_t = smem + slot * kStage;
#pragma unroll
    for (int i = 0; i < kALoads; ++i) {
      const int e = t + i * kThreads, r = e / (BK / 4), l = (e % (BK / 4)) * 4;
      a_t[(l + 0) * AS + r] = a_next[i].x;
      a_t[(l + 1) * AS + r] = a_next[i].y;
      a_t[(l + 2) * AS + r] = a_next[i].z;
      a_t[(l + 3) * AS + r] = a_next[i].w;
    }
  };

  auto copy_stage = [&](int slot, int k_tile) {
    float* a_t = smem + slot * kStage;
    float* b_s = a_t + BK * AS;
    const Index k0 = Index(k_tile) * BK;
    // Not unrolled: an unrolled copy loop keeps every copy's address live across the whole k loop, and those
    // registers are what the accumulators need.
#pragma unroll 1
    for (int i = 0; i < (AREG ? 0 : W.a_copies_per_thread()); ++i) {
      // Consecutive threads take consecutive k of one row: the warp's global reads are contiguous runs.
      const int e = t + i * kThreads, r = e / BK, l = e % BK;
      const bool inside = row0 + r < s.m && k0 + l < s.k;
      ptx::cp_async_4(a_t + l * AS + r, inside ? a + (row0 + r) * s.k + k0 + l : a, inside);
    }
    copy_tile_async<BK, BN, BS, kThreads, kVectorB>(b_s, b, s.k, s.n, k0, col0);
  };

  float acc[TM][TN] = {};
  float a_frag[2][TM], b_frag[2][TN];

  // Prologue: the first STAGES - 1 k-slices in flight. Every thread commits exactly one group per slice, also when
  // there is nothing left to copy, so "wait until STAGES - 2 groups remain" always means "slice `tile` has landed".
#pragma unroll
  for (int stage = 0; stage < STAGES - 1; ++stage) {
    if (stage < k_tiles) {
      copy_stage(stage, stage);
      if constexpr (AREG) {
        load_a(stage);
        store_a(stage);  // seen by all threads after the first iteration's barrier
      }
    }
    ptx::cp_async_commit();
  }
  for (int tile = 0; tile < k_tiles; ++tile) {
    ptx::cp_async_wait<STAGES - 2>();
    // Makes every thread's copies of slice `tile` visible, and tells every thread that all others have finished
    // multiplying slice tile - 1, whose slot the copy below reuses.
    __syncthreads();
    const int ahead = tile + STAGES - 1;
    if (ahead < k_tiles) {
      copy_stage(ahead % STAGES, ahead);
      if constexpr (AREG) load_a(ahead);  // in flight during this slice's FMAs, stored after them
    }
    ptx::cp_async_commit();

    const float* a_t = smem + (tile % STAGES) * kStage + warp_m * WM + lane_m * 4;
    const float* b_s = smem + (tile % STAGES) * kStage + BK * AS + warp_n * WN + lane_n * 4;
    auto load_fragments = [&](int buffer, int l) {
      load_float4_groups(a_frag[buffer], a_t + l * AS, LM * 4);
      load_float4_groups(b_frag[buffer], b_s + l * BS, LN * 4);
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
    // Slot ahead % STAGES held slice tile - 1, which every thread finished before this iteration's barrier; slice
    // `ahead` is read only after at least one more barrier.
    if constexpr (AREG)
      if (ahead < k_tiles) store_a(ahead % STAGES);
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

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int AREG, bool kVectorB>
void launch_one(const Shape& s, const float* a, const float* b, float* c) {
  constexpr WarpTile W = Tile<BM, BN, BK, WM, WN, TM, TN, STAGES, AREG>::shape;
  auto kernel = warptile_kernel<BM, BN, BK, WM, WN, TM, TN, STAGES, AREG, kVectorB>;
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
  if (s.n % 4 == 0 && (W.a_regs == 0 || s.k % 4 == 0))
    launch_one<W.bm, W.bn, W.bk, W.wm, W.wn, W.tm, W.tn, W.stages, W.a_regs, true>(s, a, b, c);
  else
    launch_one<W.bm, W.bn, W.bk, W.wm, W.wn, W.tm, W.tn, W.stages, W.a_regs, false>(s, a, b, c);
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
