// CUDA attention (q, k, v, o: (n, d) row-major fp32), checked against the same CPU reference as the CPU variants.
//   v1_naive - three launches with S in global memory: cuBLAS S = scale Q K^T, a row softmax kernel, cuBLAS O = P V.
//              S costs n^2 floats of device memory and is written and read back twice: what FlashAttention removes.
//   v2_flash - one block per Q block (FlashAttention-2's loop order); K_j and V_j are staged in shared memory and
//              the tile is folded into the block's output with the online softmax (merge_factors, shared with the
//              CPU). The scale is applied as each score is computed (Algorithm 1 line 9 leaves it out).
#include <fmt/format.h>

#include "kernels/attention/attention_cuda.h"
#include "kernels/common/cuda/block_reduce.cuh"
#include "kernels/common/cuda/cuda_check.h"

namespace dlsys::attention::cuda {

namespace {

using dlsys::cuda::block_reduce;
using dlsys::cuda::MaxOp;
using dlsys::cuda::SumOp;

constexpr int kSoftmaxThreads = 256;
constexpr int kFlashThreads = 256;

// One block per row of S (n, n): P = softmax over the visible keys (all, or 0..row when causal), 0 elsewhere.
__global__ void softmax_rows_kernel(float* s, std::int64_t n, bool causal) {
  __shared__ float shared[kSoftmaxThreads];
  const std::int64_t row = blockIdx.x;
  float* s_row = s + row * n;
  const std::int64_t visible = causal ? row + 1 : n;
  float m = -INFINITY;
  for (std::int64_t j = threadIdx.x; j < visible; j += blockDim.x) m = fmaxf(m, s_row[j]);
  m = block_reduce(m, shared, MaxOp{});
  float sum = 0;
  for (std::int64_t j = threadIdx.x; j < visible; j += blockDim.x) {
    const float p = expf(s_row[j] - m);
    s_row[j] = p;
    sum += p;
  }
  sum = block_reduce(sum, shared, SumOp{});
  const float inverse = 1.0f / sum;
  for (std::int64_t j = threadIdx.x; j < n; j += blockDim.x) s_row[j] = j < visible ? s_row[j] * inverse : 0.0f;
}

__global__ void v2_flash_kernel(Problem p, float scale, Tiling t, const float* q, const float* k, const float* v,
                                float* o) {
  extern __shared__ float smem[];
  // Neighbouring threads compute scores of neighbouring keys, reading rows of K_j d floats apart: with d a multiple
  // of 32 every one of them would hit the same shared-memory bank. Rows one float longer spread them over all banks.
  const std::int64_t d = p.d, br = t.br, bc = t.bc, row = flash_cuda_padded_row(d);
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

RunStats run_naive(const Problem& p, const float* d_q, const float* d_k, const float* d_v, float* d_o,
                   const MeasureOptions& options) {
  using dlsys::cuda::DeviceArray;
  DeviceArray<float> d_s(static_cast<std::size_t>(naive_scratch_elements(p.n)));  // s: (n, n)
  cublasHandle_t handle = nullptr;
  DLSYS_CUDA_CHECK(cublasCreate(&handle));
  const float scale = float(p.scale), one = 1.0f, zero = 0.0f;
  const int n = int(p.n), d = int(p.d);
  RunStats stats;
  try {
    stats.timing = dlsys::cuda::time_with_events(
        [&] {
          // cuBLAS is column-major: row-major S (n, n) is column-major S^T = K Q^T.
          DLSYS_CUDA_CHECK(
              cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, n, n, d, &scale, d_k, d, d_q, d, &zero, d_s.get(), n));
          softmax_rows_kernel<<<unsigned(p.n), kSoftmaxThreads>>>(d_s.get(), p.n, p.causal);
          DLSYS_CUDA_CHECK(cudaGetLastError());
          // Row-major O (n, d) is column-major O^T = V^T P^T.
          DLSYS_CUDA_CHECK(
              cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, d, n, n, &one, d_v, d, d_s.get(), n, &zero, d_o, d));
        },
        options);
  } catch (...) {
    cublasDestroy(handle);
    throw;
  }
  cublasDestroy(handle);
  stats.device_scratch_bytes = std::int64_t(d_s.bytes());
  return stats;
}

RunStats run_flash(const Problem& p, const Tiling& t, const float* d_q, const float* d_k, const float* d_v, float* d_o,
                   const MeasureOptions& options) {
  const std::int64_t shared_bytes = flash_cuda_shared_elements(p.d, t) * std::int64_t(sizeof(float));
  int device = 0, optin_bytes = 0;
  DLSYS_CUDA_CHECK(cudaGetDevice(&device));
  DLSYS_CUDA_CHECK(cudaDeviceGetAttribute(&optin_bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (shared_bytes > optin_bytes)
    throw BadInput(
        fmt::format("tiles br={} bc={} with d={} need {} bytes of shared memory per block; this GPU allows "
                    "{}; lower sram, br or bc",
                    t.br, t.bc, p.d, shared_bytes, optin_bytes));
  DLSYS_CUDA_CHECK(
      cudaFuncSetAttribute(v2_flash_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared_bytes)));
  RunStats stats;
  stats.timing = dlsys::cuda::time_with_events(
      [&] {
        v2_flash_kernel<<<unsigned(row_blocks(p.n, t)), kFlashThreads, std::size_t(shared_bytes)>>>(
            p, float(p.scale), t, d_q, d_k, d_v, d_o);
        DLSYS_CUDA_CHECK(cudaGetLastError());
      },
      options);
  stats.shared_bytes_per_block = shared_bytes;
  return stats;
}

}  // namespace

RunStats run(Variant variant, const Problem& p, const Tiling& t, const float* q, const float* k, const float* v,
             float* o, const MeasureOptions& options) {
  using dlsys::cuda::DeviceArray;
  const std::size_t count = static_cast<std::size_t>(p.n * p.d);
  DeviceArray<float> d_q(count), d_k(count), d_v(count), d_o(count);
  DLSYS_CUDA_CHECK(cudaMemcpy(d_q.get(), q, d_q.bytes(), cudaMemcpyHostToDevice));
  DLSYS_CUDA_CHECK(cudaMemcpy(d_k.get(), k, d_k.bytes(), cudaMemcpyHostToDevice));
  DLSYS_CUDA_CHECK(cudaMemcpy(d_v.get(), v, d_v.bytes(), cudaMemcpyHostToDevice));
  const RunStats stats = variant == Variant::Naive
                             ? run_naive(p, d_q.get(), d_k.get(), d_v.get(), d_o.get(), options)
                             : run_flash(p, t, d_q.get(), d_k.get(), d_v.get(), d_o.get(), options);
  DLSYS_CUDA_CHECK(cudaMemcpy(o, d_o.get(), d_o.bytes(), cudaMemcpyDeviceToHost));
  return stats;
}

}  // namespace dlsys::attention::cuda
