// v4_flash_tensor: FlashAttention-2 on the tensor cores, bf16 inputs, fp32 accumulators, fp32 softmax statistics.
// What it teaches beyond the fp32 kernels:
//   - mma.sync.m16n8k16 does a 16 x 8 x 16 product per warp instruction; each warp owns 16 rows of Q, kept in
//     registers as A fragments for the whole run.
//   - K and V tiles (64 keys x d) arrive in shared memory by cp.async, two stages deep, so the next tile loads while
//     this one is computed. Rows are padded by 16 bytes so ldmatrix reads them without bank conflicts; V is read with
//     ldmatrix.trans, which turns its rows of d into the column-major B operand of P V.
//   - S = Q K^T never leaves registers: the online softmax works on the accumulator fragments (a row is spread over
//     the 4 lanes of a quad: two shuffles give its max), and the fp32 accumulator layout of S is, register for
//     register, the bf16 A layout of the next product, so P becomes an operand by packing pairs (no shared memory).
//   - O is normalised by l once at the end and written in fp32.
#include "kernels/attention/cuda/device_ops.cuh"
#include "kernels/attention/cuda/launchers.h"
#include "kernels/attention/gpu_tiles.h"
#include "kernels/common/cuda/cuda_check.h"

namespace dlsys::attention::cuda {

namespace {

namespace tiles = dlsys::attention::gpu;
namespace tc = dlsys::attention::gpu::tensor;
using bf16 = __nv_bfloat16;

// Rows row0 .. row0 + ROWS - 1 of one head (n, D) into shared memory rows of tc::row_elements(D); rows past n become
// zeros, so padded keys contribute nothing and padded queries compute harmless numbers that are never stored.
template <int D, int ROWS>
__device__ __forceinline__ void load_rows_async(bf16* dst, const bf16* head, std::int64_t row0, std::int64_t n) {
  constexpr int kChunksPerRow = D / 8;  // 16 bytes = 8 bf16
  constexpr int kChunks = ROWS * kChunksPerRow;
  static_assert(kChunks % tc::kThreads == 0, "every thread copies the same number of chunks");
#pragma unroll
  for (int i = 0; i < kChunks / tc::kThreads; ++i) {
    const int c = int(threadIdx.x) + i * tc::kThreads;
    const int r = c / kChunksPerRow, col = (c % kChunksPerRow) * 8;
    const bool inside = row0 + r < n;
    ops::cp_async_16(dst + r * tc::row_elements(D) + col, head + (inside ? row0 + r : 0) * D + col, inside);
  }
}

template <int D>
__global__ void __launch_bounds__(tc::kThreads)
    flash_tensor_kernel(const bf16* q, const bf16* k, const bf16* v, float* o, std::int64_t n, bool causal,
                        float scale_log2) {
  constexpr int kRow = tc::row_elements(D);
  constexpr int kDSteps = D / 16;            // k-steps of S = Q K^T, and pairs of d tiles of O
  constexpr int kKeyTiles = tc::kKeys / 8;   // n8 tiles of S
  constexpr int kKeySteps = tc::kKeys / 16;  // k-steps of O = P V
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  bf16* q_s = reinterpret_cast<bf16*>(shared_bytes);  // (kRows, kRow)
  bf16* k_s = q_s + tc::kRows * kRow;                 // (2 stages, kKeys, kRow)
  bf16* v_s = k_s + 2 * tc::kKeys * kRow;             // (2 stages, kKeys, kRow)

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const std::int64_t blocks = (n + tc::kRows - 1) / tc::kRows;
  const std::int64_t block = tiles::block_for_launch_index(blocks, blockIdx.x, causal);
  const std::int64_t head_offset = std::int64_t(blockIdx.y) * n * D;
  const bf16 *q_head = q + head_offset, *k_head = k + head_offset, *v_head = v + head_offset;
  const std::int64_t row0 = block * tc::kRows;
  const std::int64_t kv_tiles = tiles::kv_tiles_for_block(n, tc::kRows, tc::kKeys, causal, block);

  load_rows_async<D, tc::kRows>(q_s, q_head, row0, n);
  load_rows_async<D, tc::kKeys>(k_s, k_head, 0, n);
  load_rows_async<D, tc::kKeys>(v_s, v_head, 0, n);
  ops::cp_async_commit();
  ops::cp_async_wait<0>();
  __syncthreads();

  // This warp's 16 rows of Q as A fragments, one per 16 columns of d.
  std::uint32_t q_frag[kDSteps][4];
#pragma unroll
  for (int kk = 0; kk < kDSteps; ++kk)
    ops::ldmatrix_x4(q_frag[kk],
                     q_s + (warp * 16 + tiles::ldmatrix_a_row(lane)) * kRow + kk * 16 + tiles::ldmatrix_a_col(lane));

  // Rows g and g + 8 of the warp's 16: index h = 0, 1 below. o_acc holds z (unnormalised), per d tile of 8.
  float o_acc[D / 8][4] = {};
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
  const std::int64_t rows[2] = {row0 + warp * 16 + g, row0 + warp * 16 + g + 8};

  for (std::int64_t j = 0; j < kv_tiles; ++j) {
    const int stage = int(j & 1);
    if (j + 1 < kv_tiles) {  // the other stage was last read in iteration j - 1, before its closing barrier
      load_rows_async<D, tc::kKeys>(k_s + (stage ^ 1) * tc::kKeys * kRow, k_head, (j + 1) * tc::kKeys, n);
      load_rows_async<D, tc::kKeys>(v_s + (stage ^ 1) * tc::kKeys * kRow, v_head, (j + 1) * tc::kKeys, n);
      ops::cp_async_commit();
      ops::cp_async_wait<1>();  // tile j has landed; j + 1 may still be in flight
    } else {
      ops::cp_async_wait<0>();
    }
    __syncthreads();
    const bf16* k_tile = k_s + stage * tc::kKeys * kRow;
    const bf16* v_tile = v_s + stage * tc::kKeys * kRow;

    // S = Q K_j^T for 16 rows x 64 keys: 8 accumulators of 16 x 8.
    float s[kKeyTiles][4] = {};
#pragma unroll
    for (int kk = 0; kk < kDSteps; ++kk) {
#pragma unroll
      for (int pair = 0; pair < kKeyTiles / 2; ++pair) {
        std::uint32_t b[4];
        ops::ldmatrix_x4(
            b, k_tile + (pair * 16 + tiles::ldmatrix_k_row(lane)) * kRow + kk * 16 + tiles::ldmatrix_k_col(lane));
        ops::mma_bf16_m16n8k16(s[2 * pair], q_frag[kk], b[0], b[1]);
        ops::mma_bf16_m16n8k16(s[2 * pair + 1], q_frag[kk], b[2], b[3]);
      }
    }

    // Keys past n, and causal keys after the query, are hidden (only the ragged and diagonal tiles compare).
    if (tiles::tile_needs_mask(n, tc::kRows, tc::kKeys, causal, block, j)) {
#pragma unroll
      for (int nt = 0; nt < kKeyTiles; ++nt)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const std::int64_t key = j * tc::kKeys + nt * 8 + tiles::mma_c_col(lane, r);
          if (key >= n || (causal && key > rows[r / 2])) s[nt][r] = -INFINITY;
        }
    }

    // Online softmax on the fragments. Max on the raw scores; exp2(s scale log2e - m scale log2e) is one FFMA + EX2.
    float alpha[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float tile_max = m[h];
#pragma unroll
      for (int nt = 0; nt < kKeyTiles; ++nt) tile_max = fmaxf(tile_max, fmaxf(s[nt][2 * h], s[nt][2 * h + 1]));
      const float m_new = ops::group_max<4>(tile_max);
      const float base = ops::safe_max(m_new) * scale_log2;
      alpha[h] = exp2f(fmaf(m[h], scale_log2, -base));  // 0 while the old max is -inf
      float tile_sum = 0.0f;
#pragma unroll
      for (int nt = 0; nt < kKeyTiles; ++nt)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float p = exp2f(fmaf(s[nt][2 * h + e], scale_log2, -base));
          s[nt][2 * h + e] = p;
          tile_sum += p;
        }
      l[h] = alpha[h] * l[h] + tile_sum;  // this lane's part of the row; the quad is summed once, at the end
      m[h] = m_new;
    }
#pragma unroll
    for (int dt = 0; dt < D / 8; ++dt) {
      o_acc[dt][0] *= alpha[0];
      o_acc[dt][1] *= alpha[0];
      o_acc[dt][2] *= alpha[1];
      o_acc[dt][3] *= alpha[1];
    }

    // O += P V_j: the accumulators of key tiles 2kk and 2kk + 1 are the A fragment of keys 16kk .. 16kk + 15.
#pragma unroll
    for (int kk = 0; kk < kKeySteps; ++kk) {
      std::uint32_t p_frag[4];
#pragma unroll
      for (int r = 0; r < 4; ++r)
        p_frag[r] = ops::pack_bf16(s[tiles::p_source_key_tile(kk, r)][tiles::p_source_c_reg(r, 0)],
                                   s[tiles::p_source_key_tile(kk, r)][tiles::p_source_c_reg(r, 1)]);
#pragma unroll
      for (int pair = 0; pair < D / 16; ++pair) {
        std::uint32_t b[4];
        ops::ldmatrix_x4_trans(
            b, v_tile + (kk * 16 + tiles::ldmatrix_v_row(lane)) * kRow + pair * 16 + tiles::ldmatrix_v_col(lane));
        ops::mma_bf16_m16n8k16(o_acc[2 * pair], p_frag, b[0], b[1]);
        ops::mma_bf16_m16n8k16(o_acc[2 * pair + 1], p_frag, b[2], b[3]);
      }
    }
    __syncthreads();  // every warp is done with this stage before the next iteration refills it
  }

#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const float row_sum = ops::group_sum<4>(l[h]);
    const float inverse = row_sum > 0.0f ? 1.0f / row_sum : 0.0f;
    if (rows[h] >= n) continue;
    float* o_row = o + head_offset + rows[h] * D;
#pragma unroll
    for (int dt = 0; dt < D / 8; ++dt)
      *reinterpret_cast<float2*>(o_row + dt * 8 + 2 * t) =
          make_float2(o_acc[dt][2 * h] * inverse, o_acc[dt][2 * h + 1] * inverse);
  }
}

template <int D>
void launch(const AttentionArgs<bf16>& a, cudaStream_t stream) {
  const int shared = int(tc::shared_bytes(D));
  DLSYS_CUDA_CHECK(cudaFuncSetAttribute(flash_tensor_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize, shared));
  const dim3 grid(unsigned((a.n + tc::kRows - 1) / tc::kRows), unsigned(a.heads));
  flash_tensor_kernel<D>
      <<<grid, tc::kThreads, shared, stream>>>(a.q, a.k, a.v, a.o, a.n, a.causal, float(a.scale) * ops::kLog2e);
  DLSYS_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void launch_flash_tensor(const AttentionArgs<bf16>& a, cudaStream_t stream) {
  with_compiled_head_dim(a.d, "v4_flash_tensor", [&](auto d) { launch<decltype(d)::value>(a, stream); });
}

}  // namespace dlsys::attention::cuda
