// v3_flash_registers: FlashAttention-2 in fp32 with register micro-tiles, the way a fast SGEMM is written.
// What it teaches beyond v2_flash (which gives each score and each output element its own pass over shared memory):
//   - a block takes 64 Q rows and loops over K/V tiles of 64 keys; each of its 128 threads computes a 4 x 8
//     micro-tile of S (rows 4ty.., keys tx, tx + 8, ...) from float4 reads of Q and K, 32 FMAs per 12 loads;
//   - the 8 threads that share rows are 8 neighbouring lanes, so a row's max and sum are 3 shuffles, not shared memory;
//   - P goes through shared memory only within those 8 lanes (a warp barrier, no block barrier), and each thread keeps
//     its own 4 rows of O in registers: the rescale by exp(m_old - m_new) needs no one else's numbers;
//   - K and V arrive by cp.async, two stages deep; rows are padded by 4 floats against bank conflicts;
//   - exp is exp2 with log2(e) folded into the scale; causal tiles above the diagonal are skipped, only the diagonal
//     ones compare keys with rows.
#include "kernels/attention/cuda/device_ops.cuh"
#include "kernels/attention/cuda/launchers.h"
#include "kernels/attention/gpu_tiles.h"
#include "kernels/common/cuda/cuda_check.h"

namespace dlsys::attention::cuda {

namespace {

namespace tiles = dlsys::attention::gpu;
namespace rt = dlsys::attention::gpu::registers;

// Rows row0 .. row0 + 63 of one head (n, D) into shared rows of rt::row_floats(D); rows past n become zeros.
template <int D>
__device__ __forceinline__ void load_rows_async(float* dst, const float* head, std::int64_t row0, std::int64_t n) {
  constexpr int kChunksPerRow = D / 4;  // 16 bytes = 4 floats
  constexpr int kChunks = rt::kKeys * kChunksPerRow;
  static_assert(kChunks % rt::kThreads == 0, "every thread copies the same number of chunks");
#pragma unroll
  for (int i = 0; i < kChunks / rt::kThreads; ++i) {
    const int c = int(threadIdx.x) + i * rt::kThreads;
    const int r = c / kChunksPerRow, col = (c % kChunksPerRow) * 4;
    const bool inside = row0 + r < n;
    ops::cp_async_16(dst + r * rt::row_floats(D) + col, head + (inside ? row0 + r : 0) * D + col, inside);
  }
}

template <int D>
__global__ void __launch_bounds__(rt::kThreads)
    flash_registers_kernel(const float* q, const float* k, const float* v, float* o, std::int64_t n, bool causal,
                           float scale_log2) {
  static_assert(rt::kRows == rt::kKeys, "Q and K/V tiles share the loader");
  constexpr int kRow = rt::row_floats(D);
  constexpr int R = rt::kRowsPerThread, C = rt::kKeysPerThread;
  constexpr int kOutChunks = D / 32;  // float4 columns of O per thread: 4 tx + 32 c
  extern __shared__ __align__(16) float shared_floats[];
  float* q_s = shared_floats;               // (kRows, kRow)
  float* k_s = q_s + rt::kRows * kRow;      // (2 stages, kKeys, kRow)
  float* v_s = k_s + 2 * rt::kKeys * kRow;  // (2 stages, kKeys, kRow)
  float* p_s = v_s + 2 * rt::kKeys * kRow;  // (kRows, kProbRowFloats)

  const int tx = int(threadIdx.x) % rt::kKeyGroups, ty = int(threadIdx.x) / rt::kKeyGroups;
  const std::int64_t blocks = (n + rt::kRows - 1) / rt::kRows;
  const std::int64_t block = tiles::block_for_launch_index(blocks, blockIdx.x, causal);
  const std::int64_t head_offset = std::int64_t(blockIdx.y) * n * D;
  const float *q_head = q + head_offset, *k_head = k + head_offset, *v_head = v + head_offset;
  const std::int64_t row0 = block * rt::kRows;
  const std::int64_t kv_tiles = tiles::kv_tiles_for_block(n, rt::kRows, rt::kKeys, causal, block);

  load_rows_async<D>(q_s, q_head, row0, n);
  load_rows_async<D>(k_s, k_head, 0, n);
  load_rows_async<D>(v_s, v_head, 0, n);
  ops::cp_async_commit();

  float o_acc[R][4 * kOutChunks] = {};
  float m[R], l[R];
#pragma unroll
  for (int r = 0; r < R; ++r) m[r] = -INFINITY, l[r] = 0.0f;
  const float* q_rows = q_s + (R * ty) * kRow;
  float* p_rows = p_s + (R * ty) * rt::kProbRowFloats;

  for (std::int64_t j = 0; j < kv_tiles; ++j) {
    const int stage = int(j & 1);
    if (j + 1 < kv_tiles) {  // the other stage was last read in iteration j - 1, before its closing barrier
      load_rows_async<D>(k_s + (stage ^ 1) * rt::kKeys * kRow, k_head, (j + 1) * rt::kKeys, n);
      load_rows_async<D>(v_s + (stage ^ 1) * rt::kKeys * kRow, v_head, (j + 1) * rt::kKeys, n);
      ops::cp_async_commit();
      ops::cp_async_wait<1>();
    } else {
      ops::cp_async_wait<0>();
    }
    __syncthreads();
    const float* k_tile = k_s + stage * rt::kKeys * kRow;
    const float* v_tile = v_s + stage * rt::kKeys * kRow;

    // S micro-tile: rows R ty + r, keys tx + 8c.
    float s[R][C] = {};
#pragma unroll 4
    for (int e = 0; e < D; e += 4) {
      float4 qv[R], kv[C];
#pragma unroll
      for (int r = 0; r < R; ++r) qv[r] = *reinterpret_cast<const float4*>(q_rows + r * kRow + e);
#pragma unroll
      for (int c = 0; c < C; ++c)
        kv[c] = *reinterpret_cast<const float4*>(k_tile + (tx + rt::kKeyGroups * c) * kRow + e);
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int c = 0; c < C; ++c) {
          s[r][c] = fmaf(qv[r].x, kv[c].x, s[r][c]);
          s[r][c] = fmaf(qv[r].y, kv[c].y, s[r][c]);
          s[r][c] = fmaf(qv[r].z, kv[c].z, s[r][c]);
          s[r][c] = fmaf(qv[r].w, kv[c].w, s[r][c]);
        }
    }

    if (tiles::tile_needs_mask(n, rt::kRows, rt::kKeys, causal, block, j)) {
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int c = 0; c < C; ++c) {
          const std::int64_t key = j * rt::kKeys + tx + rt::kKeyGroups * c, row = row0 + R * ty + r;
          if (key >= n || (causal && key > row)) s[r][c] = -INFINITY;
        }
    }

    // Online softmax per row; P to shared memory for the 8 lanes that own these rows.
#pragma unroll
    for (int r = 0; r < R; ++r) {
      float tile_max = m[r];
#pragma unroll
      for (int c = 0; c < C; ++c) tile_max = fmaxf(tile_max, s[r][c]);
      const float m_new = ops::group_max<rt::kKeyGroups>(tile_max);
      const float base = ops::safe_max(m_new) * scale_log2;
      const float alpha = exp2f(fmaf(m[r], scale_log2, -base));
      float tile_sum = 0.0f;
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const float p = exp2f(fmaf(s[r][c], scale_log2, -base));
        p_rows[r * rt::kProbRowFloats + tx + rt::kKeyGroups * c] = p;
        tile_sum += p;
      }
      l[r] = alpha * l[r] + tile_sum;  // this lane's part; the 8 lanes are summed once, at the end
      m[r] = m_new;
#pragma unroll
      for (int e = 0; e < 4 * kOutChunks; ++e) o_acc[r][e] *= alpha;
    }
    __syncwarp();  // P rows written by these 8 lanes are read by the same 8 lanes

    // O micro-tile += P V_j: rows R ty + r, columns 4 tx + 32 c .. + 3.
#pragma unroll 2
    for (int key = 0; key < rt::kKeys; key += 4) {
      float4 pv[R];
#pragma unroll
      for (int r = 0; r < R; ++r) pv[r] = *reinterpret_cast<const float4*>(p_rows + r * rt::kProbRowFloats + key);
#pragma unroll
      for (int kq = 0; kq < 4; ++kq) {
#pragma unroll
        for (int c = 0; c < kOutChunks; ++c) {
          const float4 vv = *reinterpret_cast<const float4*>(v_tile + (key + kq) * kRow + 4 * tx + 32 * c);
#pragma unroll
          for (int r = 0; r < R; ++r) {
            const float p = kq == 0 ? pv[r].x : kq == 1 ? pv[r].y : kq == 2 ? pv[r].z : pv[r].w;
            o_acc[r][4 * c + 0] = fmaf(p, vv.x, o_acc[r][4 * c + 0]);
            o_acc[r][4 * c + 1] = fmaf(p, vv.y, o_acc[r][4 * c + 1]);
            o_acc[r][4 * c + 2] = fmaf(p, vv.z, o_acc[r][4 * c + 2]);
            o_acc[r][4 * c + 3] = fmaf(p, vv.w, o_acc[r][4 * c + 3]);
          }
        }
      }
    }
    __syncthreads();  // the stage and P are refilled next iteration
  }

#pragma unroll
  for (int r = 0; r < R; ++r) {
    const float row_sum = ops::group_sum<rt::kKeyGroups>(l[r]);
    const float inverse = row_sum > 0.0f ? 1.0f / row_sum : 0.0f;
    const std::int64_t row = row0 + R * ty + r;
    if (row >= n) continue;
    float* o_row = o + head_offset + row * D;
#pragma unroll
    for (int c = 0; c < kOutChunks; ++c)
      *reinterpret_cast<float4*>(o_row + 4 * tx + 32 * c) =
          make_float4(o_acc[r][4 * c] * inverse, o_acc[r][4 * c + 1] * inverse, o_acc[r][4 * c + 2] * inverse,
                      o_acc[r][4 * c + 3] * inverse);
  }
}

template <int D>
void launch(const AttentionArgs<float>& a, cudaStream_t stream) {
  const int shared = int(rt::shared_floats(D) * std::int64_t(sizeof(float)));
  DLSYS_CUDA_CHECK(
      cudaFuncSetAttribute(flash_registers_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize, shared));
  const dim3 grid(unsigned((a.n + rt::kRows - 1) / rt::kRows), unsigned(a.heads));
  flash_registers_kernel<D>
      <<<grid, rt::kThreads, shared, stream>>>(a.q, a.k, a.v, a.o, a.n, a.causal, float(a.scale) * ops::kLog2e);
  DLSYS_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void launch_flash_registers(const AttentionArgs<float>& a, cudaStream_t stream) {
  with_compiled_head_dim(a.d, "v3_flash_registers", [&](auto d) { launch<decltype(d)::value>(a, stream); });
}

}  // namespace dlsys::attention::cuda
