// v2_flash: FlashAttention-2's loop order in its plainest form, for any d and any tiles the lesson's sram, br and bc
// choose. One block per Q block (and head); K_j and V_j are staged in shared memory and each tile is folded into the
// block's output with the online softmax (merge_factors, shared with the CPU). Every score and every output element
// is its own loop over shared memory, with no register tiles and no tensor cores: v3 and v4 are what it becomes when
// it is written for speed. The scale is applied as each score is computed (Algorithm 1 line 9 leaves it out).
#include "kernels/attention/cuda/launchers.h"
#include "kernels/common/cuda/cuda_check.h"

namespace dlsys::attention::cuda {

namespace {

constexpr int kFlashThreads = 256;

__global__ void v2_flash_kernel(Problem p, float scale, Tiling t, const float* q_all, const float* k_all,
                                const float* v_all, float* o_all) {
  extern __shared__ float smem[];
  // Neighbouring threads compute scores of neighbouring keys, reading rows of K_j d floats apart: with d a multiple
  // of 32 every one of them would hit the same shared-memory bank. Rows one float longer spread them over all banks.
  const std::int64_t d = p.d, br = t.br, bc = t.bc, row = flash_cuda_padded_row(d);
  const std::int64_t head_offset = std::int64_t(blockIdx.y) * p.n * d;
  const float *q = q_all + head_offset, *k = k_all + head_offset, *v = v_all + head_offset;
  float* o = o_all + head_offset;
  float* q_s = smem;             // (br, row)
  float* k_s = q_s + br * row;   // (bc, row)
  float* v_s = k_s + bc * row;   // (bc, d)
  float* o_s = v_s + bc * d;     // (br, d) unnormalised output z
  float* s_s = o_s + br * d;     // (br, bc) scores, then probabilities
  float* m_s = s_s + br * bc;    // (br) running max
  float* l_s = m_s + br;         // (br) running sum
  float* alpha_s = l_s + br;     // (br) exp(m_old - m_new)
  float* beta_s = alpha_s + br;  // (br) exp(m_tile - m_new)
  const std::int64_t i = blockIdx.x, row_begin = i * br, rows = rows_in_block(p.n, t, i);
  const int tid = threadIdx.x, threads = blockDim.x;

  for (std::int64_t e = tid; e < br * d; e += threads) {
    q_s[(e / d) * row + e % d] = e / d < rows ? q[row_begin * d + e] : 0.0f;
    o_s[e] = 0.0f;
  }
  for (std::int64_t r = tid; r < br; r += threads) m_s[r] = -INFINITY, l_s[r] = 0.0f;
  __syncthreads();

  const std::int64_t tc = col_blocks(p.n, t);
  for (std::int64_t j = 0; j < tc; ++j) {
    if (!tile_needed(p.n, t, p.causal, i, j)) break;  // later K/V blocks are masked too
    const std::int64_t col_begin = j * bc, cols = cols_in_block(p.n, t, j);
    for (std::int64_t e = tid; e < bc * d; e += threads) {
      const bool inside = e / d < cols;
      k_s[(e / d) * row + e % d] = inside ? k[col_begin * d + e] : 0.0f;
      v_s[e] = inside ? v[col_begin * d + e] : 0.0f;
    }
    __syncthreads();
    // S_ij = scale Q_i K_j^T; -inf for padding and for keys after the query (causal).
    for (std::int64_t e = tid; e < br * bc; e += threads) {
      const std::int64_t r = e / bc, c = e % bc;
      float s = -INFINITY;
      if (r < rows && c < cols && (!p.causal || col_begin + c <= row_begin + r)) {
        float dot = 0.0f;
        for (std::int64_t l = 0; l < d; ++l) dot += q_s[r * row + l] * k_s[c * row + l];
        s = scale * dot;
      }
      s_s[e] = s;
    }
    __syncthreads();
    // Per row: the tile's max and sum, then the merge with the running state.
    for (std::int64_t r = tid; r < br; r += threads) {
      float* s_row = s_s + r * bc;
      float m_tile = -INFINITY;
      for (std::int64_t c = 0; c < bc; ++c) m_tile = fmaxf(m_tile, s_row[c]);
      float l_tile = 0.0f;
      for (std::int64_t c = 0; c < bc; ++c) {
        const float pr = m_tile == -INFINITY ? 0.0f : expf(s_row[c] - m_tile);
        s_row[c] = pr;
        l_tile += pr;
      }
      const MergeFactors<float> f = merge_factors(m_s[r], l_s[r], m_tile, l_tile);
      m_s[r] = f.m_new;
      l_s[r] = f.l_new;
      alpha_s[r] = f.alpha;
      beta_s[r] = f.beta;
    }
    __syncthreads();
    // z <- alpha z + beta P~ V_j.
    for (std::int64_t e = tid; e < br * d; e += threads) {
      const std::int64_t r = e / d, col = e % d;
      float acc = 0.0f;
      for (std::int64_t c = 0; c < bc; ++c) acc += s_s[r * bc + c] * v_s[c * d + col];
      o_s[e] = alpha_s[r] * o_s[e] + beta_s[r] * acc;
    }
    __syncthreads();
  }
  for (std::int64_t e = tid; e < rows * d; e += threads) o[row_begin * d + e] = o_s[e] / l_s[e / d];
}

}  // namespace

void launch_flash_general(const AttentionArgs<float>& a, const Tiling& t, cudaStream_t stream) {
  const std::int64_t shared_bytes = flash_cuda_shared_elements(a.d, t) * std::int64_t(sizeof(float));
  int device = 0, optin_bytes = 0;
  DLSYS_CUDA_CHECK(cudaGetDevice(&device));
  DLSYS_CUDA_CHECK(cudaDeviceGetAttribute(&optin_bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (shared_bytes > optin_bytes)
    throw BadInput(
        fmt::format("tiles br={} bc={} with d={} need {} bytes of shared memory per block; this GPU allows "
                    "{}; lower sram, br or bc",
                    t.br, t.bc, a.d, shared_bytes, optin_bytes));
  DLSYS_CUDA_CHECK(
      cudaFuncSetAttribute(v2_flash_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared_bytes)));
  const Problem p{a.n, a.d, a.causal, a.scale};
  const dim3 grid(unsigned(row_blocks(a.n, t)), unsigned(a.heads));
  v2_flash_kernel<<<grid, kFlashThreads, std::size_t(shared_bytes), stream>>>(p, float(a.scale), t, a.q, a.k, a.v, a.o);
  DLSYS_CUDA_CHECK(cudaGetLastError());
}

}  // namespace dlsys::attention::cuda
