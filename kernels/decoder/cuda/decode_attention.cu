// decode_attention: one query token per head against the whole KV cache, as a decode step does.
// One block per query head: the block's threads split the n keys for the scores, reduce the maximum and the sum of
// the softmax together, then split the head's dimensions for the weighted sum of values. Scores go to a global
// scratch row per head (n can exceed shared memory). The CPU's decoder::attention_row is the reference.
#include <cmath>

#include "kernels/common/cuda/block_reduce.cuh"
#include "kernels/common/cuda/cuda_check.h"
#include "kernels/decoder/decoder_cuda.h"

namespace dlsys::decoder::cuda {

namespace {

using dlsys::cuda::block_reduce;
using dlsys::cuda::MaxOp;
using dlsys::cuda::SumOp;

constexpr int kThreads = 256;

// grid: heads blocks; block: kThreads threads. scores: (heads, n) scratch.
__global__ void decode_attention_kernel(int head_dim, int kv_dim, int group, const float* q, const float* k,
                                        const float* v, std::int64_t n, float* scores, float* out) {
  __shared__ float reduce[kThreads];
  const int head = blockIdx.x;
  const float* qh = q + head * head_dim;
  const int kv_offset = (head / group) * head_dim;
  float* row = scores + head * n;
  const float scale = rsqrtf(float(head_dim));

  float local_max = -INFINITY;
  for (std::int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    const float* kj = k + j * kv_dim + kv_offset;
    float dot = 0.0f;
    for (int i = 0; i < head_dim; ++i) dot += qh[i] * kj[i];
    row[j] = dot * scale;
    local_max = fmaxf(local_max, row[j]);
  }
  const float max_score = block_reduce(local_max, reduce, MaxOp{});

  float local_sum = 0.0f;
  for (std::int64_t j = threadIdx.x; j < n; j += blockDim.x) local_sum += (row[j] = expf(row[j] - max_score));
  const float total = block_reduce(local_sum, reduce, SumOp{});  // its barriers also publish row[] to the block

  for (int i = threadIdx.x; i < head_dim; i += blockDim.x) {
    float acc = 0.0f;
    for (std::int64_t j = 0; j < n; ++j) acc += row[j] * v[j * kv_dim + kv_offset + i];
    out[head * head_dim + i] = acc / total;
  }
}

}  // namespace

TimingStats attention_row(const Shape& s, const float* q, const float* k, const float* v, std::int64_t n, float* out,
                          const MeasureOptions& options) {
  using dlsys::cuda::DeviceArray;
  const std::size_t q_count = std::size_t(s.heads) * s.head_dim(), cache_count = std::size_t(n) * s.kv_dim();
  DeviceArray<float> d_q(q_count), d_k(cache_count), d_v(cache_count), d_out(q_count),
      d_scores(std::size_t(s.heads) * n);
  DLSYS_CUDA_CHECK(cudaMemcpy(d_q.get(), q, d_q.bytes(), cudaMemcpyHostToDevice));
  DLSYS_CUDA_CHECK(cudaMemcpy(d_k.get(), k, d_k.bytes(), cudaMemcpyHostToDevice));
  DLSYS_CUDA_CHECK(cudaMemcpy(d_v.get(), v, d_v.bytes(), cudaMemcpyHostToDevice));
  const TimingStats stats = dlsys::cuda::time_with_events(
      [&] {
        decode_attention_kernel<<<s.heads, kThreads>>>(s.head_dim(), s.kv_dim(), s.heads / s.kv_heads, d_q.get(),
                                                       d_k.get(), d_v.get(), n, d_scores.get(), d_out.get());
        DLSYS_CUDA_CHECK(cudaGetLastError());
      },
      options);
  DLSYS_CUDA_CHECK(cudaMemcpy(out, d_out.get(), d_out.bytes(), cudaMemcpyDeviceToHost));
  return stats;
}

}  // namespace dlsys::decoder::cuda
