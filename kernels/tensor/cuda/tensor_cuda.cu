// The tensor-parallel transformer layer on GPUs (see tensor_cuda.h): rank_layer.cpp's forward and backward, step for
// step, with every rank's work enqueued by one host thread on that rank's stream. The host walks the layer phase by
// phase and enqueues each phase for every rank before the next, so a collective finds every rank's part of it
// already enqueued; inside a collective the streams wait on each other's events, and nowhere else.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/errors.h"
#include "engine/ledger.h"
#include "kernels/collectives/cuda/stream_ring.h"
#include "kernels/collectives/ring_schedule.h"
#include "kernels/common/cuda/block_reduce.cuh"
#include "kernels/common/cuda/cuda_check.h"
#include "kernels/common/cuda/gpu_resources.h"
#include "kernels/common/cuda/nccl_check.h"
#include "kernels/tensor/layer_ops.h"
#include "kernels/tensor/shard_fill.h"
#include "kernels/tensor/tensor_cuda.h"

namespace dlsys::tensor::cuda {

namespace {

using collectives::Op;
using dlsys::cuda::block_reduce;
using dlsys::cuda::MaxOp;
using dlsys::cuda::SumOp;

constexpr int kRowThreads = 256;  // a power of two, as block_reduce needs
constexpr int kFlatThreads = 256;
unsigned flat_blocks(std::int64_t n) {
  return unsigned(std::clamp<std::int64_t>((n + kFlatThreads - 1) / kFlatThreads, 1, 4096));
}
// Collectives per step: 4 without sequence parallelism, 11 with it; two timing events each.
constexpr int kMaxCallsPerStep = 16;

#define GRID_STRIDE_LOOP(i, n)                                                        \
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < (n); \
       i += std::int64_t(gridDim.x) * blockDim.x)

// ---- kernels: layer_ops.h's row and element functions, one block per row where a row is reduced ----

// y = (x - mean) / sqrt(var + eps) * gain + bias, one row per block (h columns).
__global__ void layer_norm_kernel(const float* x, const float* gain, const float* bias, float* y, std::int64_t h) {
  __shared__ float shared[kRowThreads];
  const float* row = x + blockIdx.x * h;
  float* out = y + blockIdx.x * h;
  float sum = 0;
  for (std::int64_t i = threadIdx.x; i < h; i += blockDim.x) sum += row[i];
  const float mean = block_reduce(sum, shared, SumOp{}) / float(h);
  float squares = 0;
  for (std::int64_t i = threadIdx.x; i < h; i += blockDim.x) squares += (row[i] - mean) * (row[i] - mean);
  const float var = block_reduce(squares, shared, SumOp{}) / float(h);
  const float rstd = 1.0f / sqrtf(var + float(kNormEpsilon));
  for (std::int64_t i = threadIdx.x; i < h; i += blockDim.x) out[i] = (row[i] - mean) * rstd * gain[i] + bias[i];
}

// Layer norm's backward for the input, one row per block: dx += rstd (g - mean(g) - xhat mean(g xhat)), g = dy gain.
// Keeps the row's mean and 1/std in stats (2 floats per row) for the gain and bias gradients.
__global__ void layer_norm_backward_rows_kernel(const float* x, const float* gain, const float* dy, float* dx,
                                                float* stats, std::int64_t h) {
  __shared__ float shared[kRowThreads];
  const std::int64_t offset = blockIdx.x * h;
  const float *row = x + offset, *drow = dy + offset;
  float sum = 0;
  for (std::int64_t i = threadIdx.x; i < h; i += blockDim.x) sum += row[i];
  const float mean = block_reduce(sum, shared, SumOp{}) / float(h);
  float squares = 0;
  for (std::int64_t i = threadIdx.x; i < h; i += blockDim.x) squares += (row[i] - mean) * (row[i] - mean);
  const float rstd = 1.0f / sqrtf(block_reduce(squares, shared, SumOp{}) / float(h) + float(kNormEpsilon));
  float g_sum = 0, gx_sum = 0;
  for (std::int64_t i = threadIdx.x; i < h; i += blockDim.x) {
    const float g = drow[i] * gain[i];
    g_sum += g;
    gx_sum += g * (row[i] - mean) * rstd;
  }
  const float g_mean = block_reduce(g_sum, shared, SumOp{}) / float(h);
  const float gx_mean = block_reduce(gx_sum, shared, SumOp{}) / float(h);
  for (std::int64_t i = threadIdx.x; i < h; i += blockDim.x) {
    const float xhat = (row[i] - mean) * rstd;
    dx[offset + i] += rstd * (drow[i] * gain[i] - g_mean - xhat * gx_mean);
  }
  if (threadIdx.x == 0) {
    stats[2 * blockIdx.x] = mean;
    stats[2 * blockIdx.x + 1] = rstd;
  }
}

// The gain and bias gradients, one thread per column summing over the rows: dgain += sum dy xhat, dbias += sum dy.
__global__ void layer_norm_param_grad_kernel(const float* x, const float* dy, const float* stats, float* dgain,
                                             float* dbias, std::int64_t rows, std::int64_t h) {
  GRID_STRIDE_LOOP(i, h) {
    float g = 0, b = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
      const float xhat = (x[r * h + i] - stats[2 * r]) * stats[2 * r + 1];
      g += dy[r * h + i] * xhat;
      b += dy[r * h + i];
    }
    dgain[i] += g;
    dbias[i] += b;
  }
}

// Row i (block i) of one head's scores (s x s): causal softmax in place, then its dropout: the mask from the element's
// global index (mask_base + i s + j, mask_base from the global head) and the scaled kept values.
__global__ void softmax_dropout_kernel(float* probs, float* dropped, std::uint8_t* mask, std::int64_t s,
                                       std::uint64_t mask_base) {
  __shared__ float shared[kRowThreads];
  const std::int64_t i = blockIdx.x;
  float* row = probs + i * s;
  float largest = -INFINITY;
  for (std::int64_t j = threadIdx.x; j <= i; j += blockDim.x) largest = fmaxf(largest, row[j]);
  largest = block_reduce(largest, shared, MaxOp{});
  float sum = 0;
  for (std::int64_t j = threadIdx.x; j <= i; j += blockDim.x) sum += expf(row[j] - largest);
  sum = block_reduce(sum, shared, SumOp{});
  for (std::int64_t j = threadIdx.x; j < s; j += blockDim.x) {
    const float p = j <= i ? expf(row[j] - largest) / sum : 0.0f;
    const std::uint8_t keep = dropout_keep(Site::AttentionDropout, mask_base + std::uint64_t(i * s + j));
    row[j] = p;
    mask[i * s + j] = keep;
    dropped[i * s + j] = keep ? p * dropout_scale<float>() : 0.0f;
  }
}

// Row i (block i) of one head's backward through dropout and softmax, in place: d = mask ? d scale : 0, then
// dS = P (d - sum_j P d).
__global__ void softmax_dropout_backward_kernel(float* grad, const float* probs, const std::uint8_t* mask,
                                                std::int64_t s) {
  __shared__ float shared[kRowThreads];
  const std::int64_t i = blockIdx.x;
  float* row = grad + i * s;
  const float* p = probs + i * s;
  const std::uint8_t* m = mask + i * s;
  float dot = 0;
  for (std::int64_t j = threadIdx.x; j < s; j += blockDim.x) {
    row[j] = m[j] ? row[j] * dropout_scale<float>() : 0.0f;
    dot += row[j] * p[j];
  }
  dot = block_reduce(dot, shared, SumOp{});
  for (std::int64_t j = threadIdx.x; j < s; j += blockDim.x) row[j] = p[j] * (row[j] - dot);
}

// out = residual + dropout(branch), the mask drawn from global index mask_base + i and kept.
__global__ void residual_dropout_kernel(const float* residual, const float* branch, std::uint8_t* mask, float* out,
                                        std::int64_t count, Site site, std::uint64_t mask_base) {
  GRID_STRIDE_LOOP(i, count) {
    const std::uint8_t keep = dropout_keep(site, mask_base + std::uint64_t(i));
    mask[i] = keep;
    out[i] = residual[i] + (keep ? branch[i] * dropout_scale<float>() : 0.0f);
  }
}

// Dropout's backward: out = mask ? dy scale : 0.
__global__ void dropout_backward_kernel(const std::uint8_t* mask, const float* dy, float* out, std::int64_t count) {
  GRID_STRIDE_LOOP(i, count) out[i] = mask[i] ? dy[i] * dropout_scale<float>() : 0.0f;
}

__global__ void gelu_kernel(const float* z, float* out, std::int64_t count) {
  GRID_STRIDE_LOOP(i, count) out[i] = gelu(z[i]);
}

// dz = dg GeLU'(z), in place on dg.
__global__ void gelu_backward_kernel(float* grad, const float* z, std::int64_t count) {
  GRID_STRIDE_LOOP(i, count) grad[i] *= gelu_derivative(z[i]);
}

void check_launch() { DLSYS_CUDA_CHECK(cudaGetLastError()); }

// Row-major C (m x n, ldc) = alpha op(A) op(B) + beta C on column-major cuBLAS: a row-major matrix read as
// column-major is its transpose, so cuBLAS computes C^T = op(B)^T op(A)^T with the same transpose flags and strides.
void gemm(cublasHandle_t handle, bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
          float alpha, const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
          std::int64_t ldc) {
  DLSYS_CUDA_CHECK(cublasSgemm(handle, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, int(n),
                               int(m), int(k), &alpha, b, int(ldb), a, int(lda), &beta, c, int(ldc)));
}

using dlsys::cuda::Resources;

// One rank: its GPU, stream, cuBLAS handle, the buffers of RankLayer (same names, same sizes) and its events.
struct GpuRank {
  int rank = 0;
  int device = 0;
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  float *wqkv = nullptr, *wo = nullptr, *w1 = nullptr, *w2 = nullptr, *norms = nullptr;
  float *dwqkv = nullptr, *dwo = nullptr, *dw1 = nullptr, *dw2 = nullptr, *dnorms = nullptr;
  float *x = nullptr, *u = nullptr, *qkv = nullptr, *probs = nullptr, *probs_dropped = nullptr, *attn_out = nullptr;
  float *x2 = nullptr, *u2 = nullptr, *z = nullptr, *gelu_out = nullptr;
  std::uint8_t *attn_mask = nullptr, *attn_out_mask = nullptr, *mlp_out_mask = nullptr;
  float *full_a = nullptr, *full_b = nullptr, *wide = nullptr, *dqkv = nullptr, *dattn_out = nullptr;
  float *square = nullptr, *dx2 = nullptr, *dout = nullptr, *dx = nullptr, *out = nullptr;
  float* landing = nullptr;     // the ring's incoming chunk
  float* norm_stats = nullptr;  // mean and 1/std per local row, for the norms' backward
  collectives::cuda::StreamRingEvents ring_events;
  // Timing: the step's start and end, and a pair around each collective.
  cudaEvent_t start = nullptr, end = nullptr;
  std::vector<cudaEvent_t> call_begin, call_end;
  RankStepTimes times;  // this step's calls, filled as they are enqueued
};

}  // namespace

class GpuTensorLayerOnDevices final : public GpuTensorLayer {
 public:
  explicit GpuTensorLayerOnDevices(const LayerShape& shape);
  const LayerShape& shape() const override;
  const GpuPlacement& placement() const override;
  std::vector<RankStepTimes> step() override;
  std::int64_t activation_bytes(int rank) const override;
  std::vector<HostRankCopy> results() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct GpuTensorLayerOnDevices::Impl {
  LayerShape shape;
  GpuPlacement placement;
  MemoryLedger ledger;  // device bytes, by the CPU rank's tags
#if DLSYS_HAVE_NCCL
  std::vector<ncclComm_t> comms;  // NCCL rank r = our rank r; empty when the ring is used
#endif
  Resources resources;  // after what its releases read (comms), so it is destroyed before them
  std::vector<GpuRank> ranks;

  explicit Impl(const LayerShape& s);
  void allocate(GpuRank& k);
  void fill(GpuRank& k);
  void for_each_rank(const std::function<void(GpuRank&)>& work);
  void synchronize_all();

  // Collectives, in place on buffer(rank) of `count` floats; rank r keeps (reduce-scatter) or brings (all-gather)
  // chunk r, as TpGroup does.
  // `prepare` (if any) is enqueued on each rank inside the collective's timing, before the exchange.
  void collective(Op op, const char* site, bool backward, const std::function<float*(GpuRank&)>& buffer,
                  std::int64_t count, const std::function<void(GpuRank&)>& prepare = {});
  void ring(Op op, const std::function<float*(GpuRank&)>& buffer, std::int64_t count);
#if DLSYS_HAVE_NCCL
  void nccl(Op op, const std::function<float*(GpuRank&)>& buffer, std::int64_t count);
#endif
  // With sequence parallelism, every rank's local rows placed at its block of full, then all-gathered; else nothing.
  void gather_rows_all(const char* site, bool backward, float* GpuRank::*local, float* GpuRank::*full);

  void forward();
  void backward();
  void attention_forward(GpuRank& k);
  void attention_backward(GpuRank& k);
  void layer_norm_backward(GpuRank& k, const float* x, const float* gain, const float* dy, float* dx, float* dgain,
                           float* dbias);
};

GpuTensorLayerOnDevices::Impl::Impl(const LayerShape& s) : shape(s) {
  placement = place_ranks(s.ranks);
  ranks.resize(std::size_t(s.ranks));
  for (int r = 0; r < s.ranks; ++r) {
    GpuRank& k = ranks[std::size_t(r)];
    k.rank = r;
    k.device = placement.emulated ? 0 : r;
    allocate(k);
    fill(k);
  }
  if (!placement.emulated && s.ranks > 1) {
    if (placement.collectives == GpuCollectives::Ring)  // direct peer copies where the hardware allows them
      for (int r = 0; r < s.ranks; ++r) {
        const int from = ranks[std::size_t(r)].device, to = ranks[std::size_t((r + 1) % s.ranks)].device;
        int can = 0;
        DLSYS_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, from, to));
        if (can) {
          DLSYS_CUDA_CHECK(cudaSetDevice(from));
          const cudaError_t enabled = cudaDeviceEnablePeerAccess(to, 0);
          cudaGetLastError();  // "already enabled" is not an error here
          if (enabled != cudaErrorPeerAccessAlreadyEnabled) DLSYS_CUDA_CHECK(enabled);
        }
      }
#if DLSYS_HAVE_NCCL
    if (placement.collectives == GpuCollectives::Nccl) {
      std::vector<int> devices;
      for (const GpuRank& k : ranks) devices.push_back(k.device);
      comms.assign(ranks.size(), nullptr);
      resources.later([this] {
        for (ncclComm_t c : comms)
          if (c) ncclCommDestroy(c);
      });
      DLSYS_NCCL_CHECK(ncclCommInitAll(comms.data(), int(ranks.size()), devices.data()));
    }
#endif
  }
  synchronize_all();
}

void GpuTensorLayerOnDevices::Impl::allocate(GpuRank& k) {
  const std::int64_t n = shape.tokens(), nl = shape.local_tokens(), h = shape.hidden, hl = shape.hidden_per_rank();
  const std::int64_t f = shape.ffn_per_rank(), scores = shape.heads_per_rank() * shape.batch * shape.seq * shape.seq;
  const std::string suffix = fmt::format(" rank {}", k.rank);
  const std::string weights = "weights" + suffix, grads = "gradients" + suffix, acts = "activations" + suffix,
                    scratch = "scratch" + suffix;
  auto values = [&](const std::string& tag, std::int64_t count) {
    ledger.allocate(tag, count * std::int64_t(sizeof(float)));
    return resources.floats(k.device, count);
  };
  auto mask = [&](std::int64_t count) {
    ledger.allocate(acts, count);
    return static_cast<std::uint8_t*>(resources.bytes(k.device, count));
  };
  k.stream = resources.stream(k.device);
  k.blas = resources.blas(k.device, k.stream);
  k.ring_events = collectives::cuda::make_stream_ring_events(resources, k.device);
  k.start = resources.event(k.device, true);
  k.end = resources.event(k.device, true);
  for (int c = 0; c < kMaxCallsPerStep; ++c) {
    k.call_begin.push_back(resources.event(k.device, true));
    k.call_end.push_back(resources.event(k.device, true));
  }
  k.wqkv = values(weights, h * 3 * hl);
  k.wo = values(weights, hl * h);
  k.w1 = values(weights, h * f);
  k.w2 = values(weights, f * h);
  k.norms = values(weights, 4 * h);
  k.dwqkv = values(grads, h * 3 * hl);
  k.dwo = values(grads, hl * h);
  k.dw1 = values(grads, h * f);
  k.dw2 = values(grads, f * h);
  k.dnorms = values(grads, 4 * h);
  k.x = values(acts, nl * h);
  k.u = values(acts, nl * h);
  k.qkv = values(acts, n * 3 * hl);
  k.probs = values(acts, scores);
  k.attn_mask = mask(scores);
  k.probs_dropped = values(acts, scores);
  k.attn_out = values(acts, n * hl);
  k.attn_out_mask = mask(nl * h);
  k.x2 = values(acts, nl * h);
  k.u2 = values(acts, nl * h);
  k.z = values(acts, n * f);
  k.gelu_out = values(acts, n * f);
  k.mlp_out_mask = mask(nl * h);
  k.full_a = values(scratch, n * h);
  k.full_b = values(scratch, n * h);
  k.wide = values(scratch, n * f);
  k.dqkv = values(scratch, n * 3 * hl);
  k.dattn_out = values(scratch, n * hl);
  k.square = values(scratch, shape.seq * shape.seq);
  k.dx2 = values(scratch, nl * h);
  k.dout = values(scratch, nl * h);
  k.dx = values(scratch, nl * h);
  k.out = values(scratch, nl * h);
  k.landing = values(scratch, gpu_landing_floats(shape));
  k.norm_stats = values(scratch, 2 * nl);
}

void GpuTensorLayerOnDevices::Impl::fill(GpuRank& k) {
  const std::int64_t nl = shape.local_tokens(), h = shape.hidden, hl = shape.hidden_per_rank();
  const std::int64_t f = shape.ffn_per_rank();
  std::vector<float> x(std::size_t(nl * h)), dout(x.size()), wqkv(std::size_t(h * 3 * hl)), wo(std::size_t(hl * h)),
      w1(std::size_t(h * f)), w2(std::size_t(f * h)), norms(std::size_t(4 * h));
  fill_rank(shape, k.rank,
            RankFillTargets<float>{.x = x.data(),
                                   .dout = dout.data(),
                                   .wqkv = wqkv.data(),
                                   .wo = wo.data(),
                                   .w1 = w1.data(),
                                   .w2 = w2.data(),
                                   .norms = norms.data()});
  DLSYS_CUDA_CHECK(cudaSetDevice(k.device));
  auto upload = [&](float* to, const std::vector<float>& from) {
    DLSYS_CUDA_CHECK(cudaMemcpy(to, from.data(), from.size() * sizeof(float), cudaMemcpyHostToDevice));
  };
  upload(k.x, x);
  upload(k.dout, dout);
  upload(k.wqkv, wqkv);
  upload(k.wo, wo);
  upload(k.w1, w1);
  upload(k.w2, w2);
  upload(k.norms, norms);
  // A copy from pageable memory may return before its DMA ends, and the ranks' streams do not wait on the legacy
  // default stream the copies used: wait here, once, before any kernel reads them.
  DLSYS_CUDA_CHECK(cudaDeviceSynchronize());
}

void GpuTensorLayerOnDevices::Impl::for_each_rank(const std::function<void(GpuRank&)>& work) {
  for (GpuRank& k : ranks) {
    DLSYS_CUDA_CHECK(cudaSetDevice(k.device));
    work(k);
  }
}

void GpuTensorLayerOnDevices::Impl::synchronize_all() {
  for (GpuRank& k : ranks) {
    DLSYS_CUDA_CHECK(cudaSetDevice(k.device));
    DLSYS_CUDA_CHECK(cudaStreamSynchronize(k.stream));
  }
}

// ---- collectives ----

void GpuTensorLayerOnDevices::Impl::collective(Op op, const char* site, bool backward,
                                               const std::function<float*(GpuRank&)>& buffer, std::int64_t count,
                                               const std::function<void(GpuRank&)>& prepare) {
  const int n = shape.ranks;
  const std::size_t index = ranks.front().times.calls.size();
  if (n > 1 && index >= std::size_t(kMaxCallsPerStep)) throw RunFailure("more collectives in one step than events");
  for (GpuRank& k : ranks)
    k.times.calls.push_back(CollectiveCall{.op = op,
                                           .site = site,
                                           .backward = backward,
                                           .elements = count,
                                           .bytes_sent = gpu_ring_bytes_sent(op, n, k.rank, count),
                                           .time_us = 0});
  if (n == 1) {  // one rank: its buffer already is the result once prepared
    if (prepare) for_each_rank(prepare);
    return;
  }
  for_each_rank([&](GpuRank& k) {
    DLSYS_CUDA_CHECK(cudaEventRecord(k.call_begin[index], k.stream));
    if (prepare) prepare(k);
  });
#if DLSYS_HAVE_NCCL
  if (placement.collectives == GpuCollectives::Nccl)
    nccl(op, buffer, count);
  else
    ring(op, buffer, count);
#else
  ring(op, buffer, count);
#endif
  for_each_rank([&](GpuRank& k) { DLSYS_CUDA_CHECK(cudaEventRecord(k.call_end[index], k.stream)); });
}

// The lab's ring between the ranks' streams (kernels/collectives/cuda/stream_ring.h).
void GpuTensorLayerOnDevices::Impl::ring(Op op, const std::function<float*(GpuRank&)>& buffer, std::int64_t count) {
  std::vector<collectives::cuda::StreamRingMember> members;
  for (GpuRank& k : ranks)
    members.push_back(
        {.device = k.device, .stream = k.stream, .buffer = buffer(k), .landing = k.landing, .events = k.ring_events});
  collectives::cuda::enqueue_stream_ring(op, members, count);
}

#if DLSYS_HAVE_NCCL
// In place, all ranks' calls in one group (one thread drives every GPU). NCCL gives NCCL rank r chunk r, as we want.
void GpuTensorLayerOnDevices::Impl::nccl(Op op, const std::function<float*(GpuRank&)>& buffer, std::int64_t count) {
  const int n = shape.ranks;
  const std::int64_t chunk = count / n;       // the layer's counts (s b h, 4 h) are multiples of t
  if (op != Op::AllReduce && count % n != 0)  // the shape rules make this impossible; NCCL would read past the end
    throw RunFailure(
        fmt::format("NCCL's reduce-scatter and all-gather need a count divisible by t = {}; got {}", n, count));
  DLSYS_NCCL_CHECK(ncclGroupStart());
  for (GpuRank& k : ranks) {
    float* data = buffer(k);
    const ncclComm_t comm = comms[std::size_t(k.rank)];
    if (op == Op::AllReduce)
      DLSYS_NCCL_CHECK(ncclAllReduce(data, data, std::size_t(count), ncclFloat, ncclSum, comm, k.stream));
    else if (op == Op::ReduceScatter)
      DLSYS_NCCL_CHECK(
          ncclReduceScatter(data, data + k.rank * chunk, std::size_t(chunk), ncclFloat, ncclSum, comm, k.stream));
    else
      DLSYS_NCCL_CHECK(ncclAllGather(data + k.rank * chunk, data, std::size_t(chunk), ncclFloat, comm, k.stream));
  }
  DLSYS_NCCL_CHECK(ncclGroupEnd());
}
#endif

void GpuTensorLayerOnDevices::Impl::gather_rows_all(const char* site, bool backward, float* GpuRank::*local,
                                                    float* GpuRank::*full) {
  if (!shape.sequence_parallel) return;
  const std::int64_t h = shape.hidden, rows = shape.local_tokens();
  // Placing the block is part of the exchange, as on the CPU ranks.
  auto place = [&](GpuRank& k) {
    DLSYS_CUDA_CHECK(cudaMemcpyAsync(k.*full + shape.first_local_token(k.rank) * h, k.*local,
                                     std::size_t(rows * h) * sizeof(float), cudaMemcpyDeviceToDevice, k.stream));
  };
  collective(
      Op::AllGather, site, backward, [&](GpuRank& k) { return k.*full; }, shape.tokens() * h, place);
}

// ---- the layer ----

void GpuTensorLayerOnDevices::Impl::attention_forward(GpuRank& k) {
  const LayerShape& s = shape;
  const std::int64_t seq = s.seq, d = s.head_dim(), local_heads = s.heads_per_rank(), hl = s.hidden_per_rank();
  const std::int64_t ld_qkv = s.batch * 3 * hl, ld_out = s.batch * hl;  // one sequence position to the next
  const float scale = 1.0f / std::sqrt(float(d));
  for (std::int64_t b = 0; b < s.batch; ++b)
    for (std::int64_t j = 0; j < local_heads; ++j) {
      const float* q = k.qkv + b * 3 * hl + j * d;
      const float *key = q + hl, *v = q + 2 * hl;
      const std::int64_t offset = (b * local_heads + j) * seq * seq;
      gemm(k.blas, false, true, seq, seq, d, scale, q, ld_qkv, key, ld_qkv, 0.0f, k.probs + offset, seq);
      // The mask's index uses the global head, so the same element is dropped however the heads are split.
      const std::int64_t global_head = k.rank * local_heads + j;
      const std::uint64_t base = std::uint64_t((b * s.heads + global_head) * seq * seq);
      softmax_dropout_kernel<<<unsigned(seq), kRowThreads, 0, k.stream>>>(k.probs + offset, k.probs_dropped + offset,
                                                                          k.attn_mask + offset, seq, base);
      check_launch();
      gemm(k.blas, false, false, seq, d, seq, 1.0f, k.probs_dropped + offset, seq, v, ld_qkv, 0.0f,
           k.attn_out + b * hl + j * d, ld_out);
    }
}

void GpuTensorLayerOnDevices::Impl::attention_backward(GpuRank& k) {
  const LayerShape& s = shape;
  const std::int64_t seq = s.seq, d = s.head_dim(), local_heads = s.heads_per_rank(), hl = s.hidden_per_rank();
  const std::int64_t ld_qkv = s.batch * 3 * hl, ld_out = s.batch * hl;
  const float scale = 1.0f / std::sqrt(float(d));
  float* sq = k.square;
  for (std::int64_t b = 0; b < s.batch; ++b)
    for (std::int64_t j = 0; j < local_heads; ++j) {
      const std::int64_t col = b * 3 * hl + j * d;
      const float *q = k.qkv + col, *key = q + hl, *v = q + 2 * hl;
      float *dq = k.dqkv + col, *dk = dq + hl, *dv = dq + 2 * hl;
      const float* dout = k.dattn_out + b * hl + j * d;
      const std::int64_t offset = (b * local_heads + j) * seq * seq;
      gemm(k.blas, false, true, seq, seq, d, 1.0f, dout, ld_out, v, ld_qkv, 0.0f, sq, seq);  // d(dropped) = dO V^T
      gemm(k.blas, true, false, seq, d, seq, 1.0f, k.probs_dropped + offset, seq, dout, ld_out, 0.0f, dv,
           ld_qkv);  // dV = dropped^T dO
      softmax_dropout_backward_kernel<<<unsigned(seq), kRowThreads, 0, k.stream>>>(sq, k.probs + offset,
                                                                                   k.attn_mask + offset, seq);
      check_launch();
      gemm(k.blas, false, false, seq, d, seq, scale, sq, seq, key, ld_qkv, 0.0f, dq, ld_qkv);  // dQ = scale dS K
      gemm(k.blas, true, false, seq, d, seq, scale, sq, seq, q, ld_qkv, 0.0f, dk, ld_qkv);     // dK = scale dS^T Q
    }
}

void GpuTensorLayerOnDevices::Impl::layer_norm_backward(GpuRank& k, const float* x, const float* gain, const float* dy,
                                                        float* dx, float* dgain, float* dbias) {
  const std::int64_t rows = shape.local_tokens(), h = shape.hidden;
  layer_norm_backward_rows_kernel<<<unsigned(rows), kRowThreads, 0, k.stream>>>(x, gain, dy, dx, k.norm_stats, h);
  check_launch();
  layer_norm_param_grad_kernel<<<flat_blocks(h), kFlatThreads, 0, k.stream>>>(x, dy, k.norm_stats, dgain, dbias, rows,
                                                                              h);
  check_launch();
}

void GpuTensorLayerOnDevices::Impl::forward() {
  const LayerShape& s = shape;
  const std::int64_t n = s.tokens(), nl = s.local_tokens(), h = s.hidden, hl = s.hidden_per_rank();
  const std::int64_t f = s.ffn_per_rank();
  const bool sp = s.sequence_parallel;
  const Op reduce = sp ? Op::ReduceScatter : Op::AllReduce;
  auto row0 = [&](const GpuRank& k) { return s.first_local_token(k.rank); };
  auto full_b = [](GpuRank& k) { return k.full_b; };

  for_each_rank([&](GpuRank& k) {
    layer_norm_kernel<<<unsigned(nl), kRowThreads, 0, k.stream>>>(k.x, k.norms, k.norms + h, k.u, h);
    check_launch();
  });
  gather_rows_all("attention input (g)", false, &GpuRank::u, &GpuRank::full_a);
  for_each_rank([&](GpuRank& k) {
    const float* u_full = sp ? k.full_a : k.u;
    gemm(k.blas, false, false, n, 3 * hl, h, 1.0f, u_full, h, k.wqkv, 3 * hl, 0.0f, k.qkv, 3 * hl);
    attention_forward(k);
    gemm(k.blas, false, false, n, h, hl, 1.0f, k.attn_out, hl, k.wo, h, 0.0f, k.full_b, h);
  });
  collective(reduce, sp ? "attention output (g-bar)" : "attention output (g)", false, full_b, n * h);
  for_each_rank([&](GpuRank& k) {
    residual_dropout_kernel<<<flat_blocks(nl * h), kFlatThreads, 0, k.stream>>>(
        k.x, k.full_b + row0(k) * h, k.attn_out_mask, k.x2, nl * h, Site::AttentionOutDropout,
        std::uint64_t(row0(k) * h));
    check_launch();
    layer_norm_kernel<<<unsigned(nl), kRowThreads, 0, k.stream>>>(k.x2, k.norms + 2 * h, k.norms + 3 * h, k.u2, h);
    check_launch();
  });
  gather_rows_all("MLP input (g)", false, &GpuRank::u2, &GpuRank::full_a);
  for_each_rank([&](GpuRank& k) {
    const float* u2_full = sp ? k.full_a : k.u2;
    gemm(k.blas, false, false, n, f, h, 1.0f, u2_full, h, k.w1, f, 0.0f, k.z, f);
    // GeLU on this rank's own columns: the column split keeps whole pre-activations here.
    gelu_kernel<<<flat_blocks(n * f), kFlatThreads, 0, k.stream>>>(k.z, k.gelu_out, n * f);
    check_launch();
    gemm(k.blas, false, false, n, h, f, 1.0f, k.gelu_out, f, k.w2, h, 0.0f, k.full_b, h);
  });
  collective(reduce, sp ? "MLP output (g-bar)" : "MLP output (g)", false, full_b, n * h);
  for_each_rank([&](GpuRank& k) {
    residual_dropout_kernel<<<flat_blocks(nl * h), kFlatThreads, 0, k.stream>>>(
        k.x2, k.full_b + row0(k) * h, k.mlp_out_mask, k.out, nl * h, Site::MlpOutDropout, std::uint64_t(row0(k) * h));
    check_launch();
  });
}

void GpuTensorLayerOnDevices::Impl::backward() {
  const LayerShape& s = shape;
  const std::int64_t n = s.tokens(), nl = s.local_tokens(), h = s.hidden, hl = s.hidden_per_rank();
  const std::int64_t f = s.ffn_per_rank();
  const bool sp = s.sequence_parallel;
  const Op reduce = sp ? Op::ReduceScatter : Op::AllReduce;
  auto row0 = [&](const GpuRank& k) { return s.first_local_token(k.rank); };
  auto full_a = [](GpuRank& k) { return k.full_a; };
  auto full_b = [](GpuRank& k) { return k.full_b; };

  // MLP: out = x2 + dropout(Y). dY on this rank's rows, then all of them (SP: all-gather).
  for_each_rank([&](GpuRank& k) {
    DLSYS_CUDA_CHECK(cudaMemsetAsync(k.dnorms, 0, std::size_t(4 * h) * sizeof(float), k.stream));
    dropout_backward_kernel<<<flat_blocks(nl * h), kFlatThreads, 0, k.stream>>>(k.mlp_out_mask, k.dout,
                                                                                k.full_a + row0(k) * h, nl * h);
    check_launch();
  });
  if (sp) collective(Op::AllGather, "MLP output gradient (g-bar)", true, full_a, n * h);
  for_each_rank([&](GpuRank& k) {
    gemm(k.blas, false, true, n, f, h, 1.0f, k.full_a, h, k.w2, h, 0.0f, k.wide, f);              // dG = dY W2^T
    gemm(k.blas, true, false, f, h, n, 1.0f, k.gelu_out, f, k.full_a, h, 0.0f, k.dw2, h);         // dW2 = G^T dY
    gelu_backward_kernel<<<flat_blocks(n * f), kFlatThreads, 0, k.stream>>>(k.wide, k.z, n * f);  // dZ
    check_launch();
  });
  gather_rows_all("MLP input, again for dW1", true, &GpuRank::u2, &GpuRank::full_b);
  for_each_rank([&](GpuRank& k) {
    const float* u2_full = sp ? k.full_b : k.u2;
    gemm(k.blas, true, false, h, f, n, 1.0f, u2_full, h, k.wide, f, 0.0f, k.dw1, f);
    gemm(k.blas, false, true, n, h, f, 1.0f, k.wide, f, k.w1, f, 0.0f, k.full_b, h);  // this rank's part of dU2
  });
  collective(reduce, sp ? "MLP input gradient (g)" : "MLP input gradient (f)", true, full_b, n * h);
  for_each_rank([&](GpuRank& k) {
    // The residual carries dout straight through.
    DLSYS_CUDA_CHECK(
        cudaMemcpyAsync(k.dx2, k.dout, std::size_t(nl * h) * sizeof(float), cudaMemcpyDeviceToDevice, k.stream));
    layer_norm_backward(k, k.x2, k.norms + 2 * h, k.full_b + row0(k) * h, k.dx2, k.dnorms + 2 * h, k.dnorms + 3 * h);
    // Attention: x2 = x + dropout(A).
    dropout_backward_kernel<<<flat_blocks(nl * h), kFlatThreads, 0, k.stream>>>(k.attn_out_mask, k.dx2,
                                                                                k.full_a + row0(k) * h, nl * h);
    check_launch();
  });
  if (sp) collective(Op::AllGather, "attention output gradient (g-bar)", true, full_a, n * h);
  for_each_rank([&](GpuRank& k) {
    gemm(k.blas, false, true, n, hl, h, 1.0f, k.full_a, h, k.wo, h, 0.0f, k.dattn_out, hl);  // dO
    gemm(k.blas, true, false, hl, h, n, 1.0f, k.attn_out, hl, k.full_a, h, 0.0f, k.dwo, h);  // dW_o
    attention_backward(k);
  });
  gather_rows_all("attention input, again for dWqkv", true, &GpuRank::u, &GpuRank::full_b);
  for_each_rank([&](GpuRank& k) {
    const float* u_full = sp ? k.full_b : k.u;
    gemm(k.blas, true, false, h, 3 * hl, n, 1.0f, u_full, h, k.dqkv, 3 * hl, 0.0f, k.dwqkv, 3 * hl);
    gemm(k.blas, false, true, n, h, 3 * hl, 1.0f, k.dqkv, 3 * hl, k.wqkv, 3 * hl, 0.0f, k.full_b,
         h);  // this rank's part of dU
  });
  collective(reduce, sp ? "attention input gradient (g)" : "attention input gradient (f)", true, full_b, n * h);
  for_each_rank([&](GpuRank& k) {
    DLSYS_CUDA_CHECK(
        cudaMemcpyAsync(k.dx, k.dx2, std::size_t(nl * h) * sizeof(float), cudaMemcpyDeviceToDevice, k.stream));
    layer_norm_backward(k, k.x, k.norms, k.full_b + row0(k) * h, k.dx, k.dnorms, k.dnorms + h);
  });
  // With SP each rank summed the norms' gradients over its own rows only.
  if (sp)
    collective(
        Op::AllReduce, "layer-norm weight gradients", true, [](GpuRank& k) { return k.dnorms; }, 4 * h);
}

// ---- the public face ----

GpuPlacement place_ranks(int ranks) { return collectives::cuda::place_gpu_ranks(ranks); }

GpuTensorLayerOnDevices::GpuTensorLayerOnDevices(const LayerShape& shape) : impl_(std::make_unique<Impl>(shape)) {}

std::unique_ptr<GpuTensorLayer> make_gpu_tensor_layer(const LayerShape& shape) {
  return std::make_unique<GpuTensorLayerOnDevices>(shape);
}

const LayerShape& GpuTensorLayerOnDevices::shape() const { return impl_->shape; }
const GpuPlacement& GpuTensorLayerOnDevices::placement() const { return impl_->placement; }

std::vector<RankStepTimes> GpuTensorLayerOnDevices::step() {
  Impl& m = *impl_;
  m.synchronize_all();  // every rank starts from an idle GPU
  m.for_each_rank([&](GpuRank& k) {
    k.times = RankStepTimes{};
    DLSYS_CUDA_CHECK(cudaEventRecord(k.start, k.stream));
  });
  m.forward();
  m.backward();
  m.for_each_rank([&](GpuRank& k) { DLSYS_CUDA_CHECK(cudaEventRecord(k.end, k.stream)); });
  std::vector<RankStepTimes> out;
  for (GpuRank& k : m.ranks) {
    DLSYS_CUDA_CHECK(cudaSetDevice(k.device));
    DLSYS_CUDA_CHECK(cudaEventSynchronize(k.end));  // a kernel's failure surfaces here
    auto elapsed_us = [](cudaEvent_t from, cudaEvent_t to) {
      float ms = 0;
      DLSYS_CUDA_CHECK(cudaEventElapsedTime(&ms, from, to));
      return double(ms) * 1e3;
    };
    RankStepTimes t = k.times;
    t.step_us = elapsed_us(k.start, k.end);
    if (m.shape.ranks > 1)
      for (std::size_t c = 0; c < t.calls.size(); ++c) {
        t.calls[c].time_us = elapsed_us(k.call_begin[c], k.call_end[c]);
        t.comm_us += t.calls[c].time_us;
      }
    t.compute_us = t.step_us - t.comm_us;
    out.push_back(std::move(t));
  }
  return out;
}

std::int64_t GpuTensorLayerOnDevices::activation_bytes(int rank) const {
  return impl_->ledger.current_bytes(fmt::format("activations rank {}", rank));
}

std::vector<HostRankCopy> GpuTensorLayerOnDevices::results() const {
  Impl& m = *impl_;
  m.synchronize_all();
  const LayerShape& s = m.shape;
  const std::int64_t nl = s.local_tokens(), h = s.hidden, hl = s.hidden_per_rank(), f = s.ffn_per_rank();
  std::vector<HostRankCopy> out;
  for (GpuRank& k : m.ranks) {
    DLSYS_CUDA_CHECK(cudaSetDevice(k.device));
    auto copy = [](const float* from, std::int64_t count) {
      std::vector<float> to(static_cast<std::size_t>(count));
      DLSYS_CUDA_CHECK(cudaMemcpy(to.data(), from, to.size() * sizeof(float), cudaMemcpyDeviceToHost));
      return to;
    };
    HostRankCopy c;
    c.rank = k.rank;
    c.output = copy(k.out, nl * h);
    c.input_gradient = copy(k.dx, nl * h);
    c.grad_wqkv = copy(k.dwqkv, h * 3 * hl);
    c.grad_wo = copy(k.dwo, hl * h);
    c.grad_w1 = copy(k.dw1, h * f);
    c.grad_w2 = copy(k.dw2, f * h);
    c.grad_norms = copy(k.dnorms, 4 * h);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace dlsys::tensor::cuda
