// One rank's transformer layer, forward and backward (see rank_layer.h): GEMMs on OpenBLAS (sgemm for the ranks,
// dgemm for the reference), attention head by head, element-wise work in plain loops.
#include "kernels/tensor/rank_layer.h"

#include <cblas.h>

#include <cmath>
#include <cstring>
#include <ctime>
#include <type_traits>

#include "engine/measure.h"
#include "kernels/tensor/layer_ops.h"
#include "kernels/tensor/shard_fill.h"

namespace dlsys::tensor {

namespace {

// C = alpha op(A) op(B) + beta C, row-major.
void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
          std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, int(m), int(n),
              int(k), alpha, a, int(lda), b, int(ldb), beta, c, int(ldc));
}
void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, double alpha, const double* a,
          std::int64_t lda, const double* b, std::int64_t ldb, double beta, double* c, std::int64_t ldc) {
  cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, int(m), int(n),
              int(k), alpha, a, int(lda), b, int(ldb), beta, c, int(ldc));
}

// CPU time this thread has used, in microseconds.
double thread_cpu_us() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return double(now.tv_sec) * 1e6 + double(now.tv_nsec) * 1e-3;
}

template <typename T>
void copy_values(T* target, const T* source, std::int64_t count) {
  std::memcpy(target, source, static_cast<std::size_t>(count) * sizeof(T));
}

struct Sizes {
  std::int64_t n, n_local, h, h_rank, ffn_rank, scores;  // s b, local rows, h, h/t, 4h/t, (a/t) b s^2
};

Sizes sizes_of(const LayerShape& s) {
  return {s.tokens(),          s.local_tokens(), s.hidden,
          s.hidden_per_rank(), s.ffn_per_rank(), s.heads_per_rank() * s.batch * s.seq * s.seq};
}

}  // namespace

RankBufferCounts rank_buffer_counts(const LayerShape& shape) {
  const Sizes z = sizes_of(shape);
  RankBufferCounts c;
  c.weight_values = z.h * 3 * z.h_rank + z.h_rank * z.h + z.h * z.ffn_rank + z.ffn_rank * z.h + 4 * z.h;
  // x, u, x2, u2 (local rows); q k v, attention output, GeLU input and output (all rows, this rank's columns);
  // softmax output and its dropout output (this rank's heads).
  c.activation_values = 4 * z.n_local * z.h + z.n * (3 * z.h_rank + z.h_rank + 2 * z.ffn_rank) + 2 * z.scores;
  c.activation_mask_bytes = z.scores + 2 * z.n_local * z.h;
  // full_a, full_b, wide, dqkv, dattn_out, square, dx2, dout, dx, out
  c.scratch_values = 2 * z.n * z.h + z.n * z.ffn_rank + z.n * 3 * z.h_rank + z.n * z.h_rank + shape.seq * shape.seq +
                     4 * z.n_local * z.h;
  return c;
}

template <typename T>
RankLayer<T>::RankLayer(const LayerShape& shape, int rank, MemoryLedger& ledger, const std::string& tag_suffix,
                        TpGroup* group)
    : shape_(shape), rank_(rank), group_(group) {
  const Sizes z = sizes_of(shape);
  const std::string weights = "weights" + tag_suffix, grads = "gradients" + tag_suffix,
                    acts = "activations" + tag_suffix, scratch = "scratch" + tag_suffix;
  auto values = [&](const std::string& tag, std::int64_t count) {
    return HostBuffer<T>(ledger, tag, static_cast<std::size_t>(count));
  };
  auto bytes = [&](std::int64_t count) {
    return HostBuffer<std::uint8_t>(ledger, acts, static_cast<std::size_t>(count));
  };
  wqkv_ = values(weights, z.h * 3 * z.h_rank);
  wo_ = values(weights, z.h_rank * z.h);
  w1_ = values(weights, z.h * z.ffn_rank);
  w2_ = values(weights, z.ffn_rank * z.h);
  norms_ = values(weights, 4 * z.h);
  dwqkv_ = values(grads, z.h * 3 * z.h_rank);
  dwo_ = values(grads, z.h_rank * z.h);
  dw1_ = values(grads, z.h * z.ffn_rank);
  dw2_ = values(grads, z.ffn_rank * z.h);
  dnorms_ = values(grads, 4 * z.h);

  x_ = values(acts, z.n_local * z.h);
  u_ = values(acts, z.n_local * z.h);
  qkv_ = values(acts, z.n * 3 * z.h_rank);
  probs_ = values(acts, z.scores);
  attn_mask_ = bytes(z.scores);
  probs_dropped_ = values(acts, z.scores);
  attn_out_ = values(acts, z.n * z.h_rank);
  attn_out_mask_ = bytes(z.n_local * z.h);
  x2_ = values(acts, z.n_local * z.h);
  u2_ = values(acts, z.n_local * z.h);
  z_ = values(acts, z.n * z.ffn_rank);
  gelu_out_ = values(acts, z.n * z.ffn_rank);
  mlp_out_mask_ = bytes(z.n_local * z.h);

  full_a_ = values(scratch, z.n * z.h);
  full_b_ = values(scratch, z.n * z.h);
  wide_ = values(scratch, z.n * z.ffn_rank);
  dqkv_ = values(scratch, z.n * 3 * z.h_rank);
  dattn_out_ = values(scratch, z.n * z.h_rank);
  square_ = values(scratch, shape.seq * shape.seq);
  dx2_ = values(scratch, z.n_local * z.h);
  dout_ = values(scratch, z.n_local * z.h);
  dx_ = values(scratch, z.n_local * z.h);
  out_ = values(scratch, z.n_local * z.h);
  fill_inputs_and_weights();
}

template <typename T>
void RankLayer<T>::fill_inputs_and_weights() {
  fill_rank(shape_, rank_,
            RankFillTargets<T>{.x = x_.data(),
                               .dout = dout_.data(),
                               .wqkv = wqkv_.data(),
                               .wo = wo_.data(),
                               .w1 = w1_.data(),
                               .w2 = w2_.data(),
                               .norms = norms_.data()});
}

template <typename T>
void RankLayer<T>::collective(RankStepTimes& times, collectives::Op op, const char* site, bool backward, T* buffer,
                              std::int64_t count) {
  CollectiveCall call{.op = op, .site = site, .backward = backward, .elements = count};
  const double cpu_before = thread_cpu_us();
  if constexpr (std::is_same_v<T, float>) {
    if (group_ != nullptr && group_->size() > 1) {
      const CollectiveCall done = op == collectives::Op::AllReduce       ? group_->all_reduce(rank_, buffer, count)
                                  : op == collectives::Op::ReduceScatter ? group_->reduce_scatter(rank_, buffer, count)
                                                                         : group_->all_gather(rank_, buffer, count);
      call.bytes_sent = done.bytes_sent;
      call.time_us = done.time_us;
    }
  } else {
    (void)buffer;  // the double reference is one rank: its partial sums are already whole
  }
  times.comm_us += call.time_us;
  times.comm_cpu_us += thread_cpu_us() - cpu_before;
  times.calls.push_back(std::move(call));
}

template <typename T>
const T* RankLayer<T>::gather_rows(RankStepTimes& times, const char* site, bool backward, const T* local, T* full) {
  if (!shape_.sequence_parallel) return local;
  const std::int64_t h = shape_.hidden;
  const Stopwatch watch;  // placing the block is part of the exchange
  const double cpu_before = thread_cpu_us();
  copy_values(full + shape_.first_local_token(rank_) * h, local, shape_.local_tokens() * h);
  times.comm_us += watch.elapsed_us();
  times.comm_cpu_us += thread_cpu_us() - cpu_before;
  collective(times, collectives::Op::AllGather, site, backward, full, shape_.tokens() * h);
  return full;
}

template <typename T>
void RankLayer<T>::attention_forward() {
  const LayerShape& s = shape_;
  const std::int64_t seq = s.seq, d = s.head_dim(), local_heads = s.heads_per_rank(), hl = s.hidden_per_rank();
  const std::int64_t ld_qkv = s.batch * 3 * hl, ld_out = s.batch * hl;  // one sequence position to the next
  const T scale = T(1) / std::sqrt(T(d));
  for (std::int64_t b = 0; b < s.batch; ++b)
    for (std::int64_t j = 0; j < local_heads; ++j) {
      const T* q = qkv_.data() + b * 3 * hl + j * d;
      const T *k = q + hl, *v = q + 2 * hl;
      const std::int64_t offset = (b * local_heads + j) * seq * seq;
      T* p = probs_.data() + offset;
      T* dropped = probs_dropped_.data() + offset;
      std::uint8_t* mask = attn_mask_.data() + offset;
      gemm(false, true, seq, seq, d, scale, q, ld_qkv, k, ld_qkv, T(0), p, seq);
      for (std::int64_t i = 0; i < seq; ++i) causal_softmax_row(p + i * seq, i, seq);
      // The mask's index uses the global head, so the same element is dropped however the heads are split.
      const std::int64_t global_head = rank_ * local_heads + j;
      const std::uint64_t base = std::uint64_t((b * s.heads + global_head) * seq * seq);
      for (std::int64_t e = 0; e < seq * seq; ++e) {
        mask[e] = dropout_keep(Site::AttentionDropout, base + std::uint64_t(e));
        dropped[e] = mask[e] ? p[e] * dropout_scale<T>() : T(0);
      }
      gemm(false, false, seq, d, seq, T(1), dropped, seq, v, ld_qkv, T(0), attn_out_.data() + b * hl + j * d, ld_out);
    }
}

template <typename T>
void RankLayer<T>::attention_backward() {
  const LayerShape& s = shape_;
  const std::int64_t seq = s.seq, d = s.head_dim(), local_heads = s.heads_per_rank(), hl = s.hidden_per_rank();
  const std::int64_t ld_qkv = s.batch * 3 * hl, ld_out = s.batch * hl;
  const T scale = T(1) / std::sqrt(T(d));
  T* sq = square_.data();
  for (std::int64_t b = 0; b < s.batch; ++b)
    for (std::int64_t j = 0; j < local_heads; ++j) {
      const std::int64_t col = b * 3 * hl + j * d;
      const T *q = qkv_.data() + col, *k = q + hl, *v = q + 2 * hl;
      T *dq = dqkv_.data() + col, *dk = dq + hl, *dv = dq + 2 * hl;
      const T* dout = dattn_out_.data() + b * hl + j * d;
      const std::int64_t offset = (b * local_heads + j) * seq * seq;
      const T* p = probs_.data() + offset;
      const T* dropped = probs_dropped_.data() + offset;
      const std::uint8_t* mask = attn_mask_.data() + offset;
      gemm(false, true, seq, seq, d, T(1), dout, ld_out, v, ld_qkv, T(0), sq, seq);        // d(dropped) = dO V^T
      gemm(true, false, seq, d, seq, T(1), dropped, seq, dout, ld_out, T(0), dv, ld_qkv);  // dV = dropped^T dO
      for (std::int64_t i = 0; i < seq; ++i) {  // through dropout, then softmax: dS = P (dP - sum_j P dP)
        T* row = sq + i * seq;
        const T* p_row = p + i * seq;
        const std::uint8_t* m_row = mask + i * seq;
        T dot = 0;
        for (std::int64_t c = 0; c < seq; ++c) {
          row[c] = m_row[c] ? row[c] * dropout_scale<T>() : T(0);
          dot += row[c] * p_row[c];
        }
        for (std::int64_t c = 0; c < seq; ++c) row[c] = p_row[c] * (row[c] - dot);
      }
      gemm(false, false, seq, d, seq, scale, sq, seq, k, ld_qkv, T(0), dq, ld_qkv);  // dQ = scale dS K
      gemm(true, false, seq, d, seq, scale, sq, seq, q, ld_qkv, T(0), dk, ld_qkv);   // dK = scale dS^T Q
    }
}

template <typename T>
void RankLayer<T>::forward(RankStepTimes& times) {
  const Sizes z = sizes_of(shape_);
  const std::int64_t h = z.h, nl = z.n_local, row0 = shape_.first_local_token(rank_);
  const bool sp = shape_.sequence_parallel;
  const auto reduce = sp ? collectives::Op::ReduceScatter : collectives::Op::AllReduce;
  const T *gain1 = norms_.data(), *bias1 = gain1 + h, *gain2 = gain1 + 2 * h, *bias2 = gain1 + 3 * h;

  for (std::int64_t i = 0; i < nl; ++i) layer_norm_row(x_.data() + i * h, gain1, bias1, u_.data() + i * h, h);
  const T* u_full = gather_rows(times, "attention input (g)", false, u_.data(), full_a_.data());
  gemm(false, false, z.n, 3 * z.h_rank, h, T(1), u_full, h, wqkv_.data(), 3 * z.h_rank, T(0), qkv_.data(),
       3 * z.h_rank);
  attention_forward();
  gemm(false, false, z.n, h, z.h_rank, T(1), attn_out_.data(), z.h_rank, wo_.data(), h, T(0), full_b_.data(), h);
  collective(times, reduce, sp ? "attention output (g-bar)" : "attention output (g)", false, full_b_.data(), z.n * h);
  const T* attn = full_b_.data() + row0 * h;  // this rank's rows of the sum
  for (std::int64_t i = 0; i < nl * h; ++i) {
    attn_out_mask_[i] = dropout_keep(Site::AttentionOutDropout, std::uint64_t(row0 * h + i));
    x2_[i] = x_[i] + (attn_out_mask_[i] ? attn[i] * dropout_scale<T>() : T(0));
  }

  for (std::int64_t i = 0; i < nl; ++i) layer_norm_row(x2_.data() + i * h, gain2, bias2, u2_.data() + i * h, h);
  const T* u2_full = gather_rows(times, "MLP input (g)", false, u2_.data(), full_a_.data());
  gemm(false, false, z.n, z.ffn_rank, h, T(1), u2_full, h, w1_.data(), z.ffn_rank, T(0), z_.data(), z.ffn_rank);
  // GeLU on this rank's own columns: the column split keeps whole pre-activations here (see the lesson's step 3).
  for (std::int64_t i = 0; i < z.n * z.ffn_rank; ++i) gelu_out_[i] = gelu(z_[i]);
  gemm(false, false, z.n, h, z.ffn_rank, T(1), gelu_out_.data(), z.ffn_rank, w2_.data(), h, T(0), full_b_.data(), h);
  collective(times, reduce, sp ? "MLP output (g-bar)" : "MLP output (g)", false, full_b_.data(), z.n * h);
  const T* mlp = full_b_.data() + row0 * h;
  for (std::int64_t i = 0; i < nl * h; ++i) {
    mlp_out_mask_[i] = dropout_keep(Site::MlpOutDropout, std::uint64_t(row0 * h + i));
    out_[i] = x2_[i] + (mlp_out_mask_[i] ? mlp[i] * dropout_scale<T>() : T(0));
  }
}

template <typename T>
void RankLayer<T>::backward(RankStepTimes& times) {
  const Sizes z = sizes_of(shape_);
  const std::int64_t h = z.h, nl = z.n_local, row0 = shape_.first_local_token(rank_);
  const bool sp = shape_.sequence_parallel;
  const auto reduce = sp ? collectives::Op::ReduceScatter : collectives::Op::AllReduce;
  const T *gain1 = norms_.data(), *gain2 = gain1 + 2 * h;
  T *dgain1 = dnorms_.data(), *dbias1 = dgain1 + h, *dgain2 = dgain1 + 2 * h, *dbias2 = dgain1 + 3 * h;
  for (std::int64_t i = 0; i < 4 * h; ++i) dnorms_[i] = T(0);

  // MLP: out = x2 + dropout(Y). dY on this rank's rows, then all of them (SP: all-gather, f's backward).
  T* dy_local = full_a_.data() + row0 * h;
  for (std::int64_t i = 0; i < nl * h; ++i) dy_local[i] = mlp_out_mask_[i] ? dout_[i] * dropout_scale<T>() : T(0);
  if (sp) collective(times, collectives::Op::AllGather, "MLP output gradient (g-bar)", true, full_a_.data(), z.n * h);
  const T* dy = full_a_.data();
  gemm(false, true, z.n, z.ffn_rank, h, T(1), dy, h, w2_.data(), h, T(0), wide_.data(), z.ffn_rank);  // dG = dY W2^T
  gemm(true, false, z.ffn_rank, h, z.n, T(1), gelu_out_.data(), z.ffn_rank, dy, h, T(0), dw2_.data(), h);
  for (std::int64_t i = 0; i < z.n * z.ffn_rank; ++i) wide_[i] *= gelu_derivative(z_[i]);  // dZ
  const T* u2_full = gather_rows(times, "MLP input, again for dW1", true, u2_.data(), full_b_.data());
  gemm(true, false, h, z.ffn_rank, z.n, T(1), u2_full, h, wide_.data(), z.ffn_rank, T(0), dw1_.data(), z.ffn_rank);
  gemm(false, true, z.n, h, z.ffn_rank, T(1), wide_.data(), z.ffn_rank, w1_.data(), z.ffn_rank, T(0), full_b_.data(),
       h);  // this rank's part of dU2
  collective(times, reduce, sp ? "MLP input gradient (g)" : "MLP input gradient (f)", true, full_b_.data(), z.n * h);
  copy_values(dx2_.data(), dout_.data(), nl * h);  // the residual carries dout straight through
  const T* du2 = full_b_.data() + row0 * h;
  for (std::int64_t i = 0; i < nl; ++i)
    layer_norm_backward_row(x2_.data() + i * h, gain2, du2 + i * h, dx2_.data() + i * h, dgain2, dbias2, h);

  // Attention: x2 = x + dropout(A).
  T* da_local = full_a_.data() + row0 * h;
  for (std::int64_t i = 0; i < nl * h; ++i) da_local[i] = attn_out_mask_[i] ? dx2_[i] * dropout_scale<T>() : T(0);
  if (sp)
    collective(times, collectives::Op::AllGather, "attention output gradient (g-bar)", true, full_a_.data(), z.n * h);
  const T* da = full_a_.data();
  gemm(false, true, z.n, z.h_rank, h, T(1), da, h, wo_.data(), h, T(0), dattn_out_.data(), z.h_rank);  // dO
  gemm(true, false, z.h_rank, h, z.n, T(1), attn_out_.data(), z.h_rank, da, h, T(0), dwo_.data(), h);
  attention_backward();
  const T* u_full = gather_rows(times, "attention input, again for dWqkv", true, u_.data(), full_b_.data());
  gemm(true, false, h, 3 * z.h_rank, z.n, T(1), u_full, h, dqkv_.data(), 3 * z.h_rank, T(0), dwqkv_.data(),
       3 * z.h_rank);
  gemm(false, true, z.n, h, 3 * z.h_rank, T(1), dqkv_.data(), 3 * z.h_rank, wqkv_.data(), 3 * z.h_rank, T(0),
       full_b_.data(), h);  // this rank's part of dU
  collective(times, reduce, sp ? "attention input gradient (g)" : "attention input gradient (f)", true, full_b_.data(),
             z.n * h);
  copy_values(dx_.data(), dx2_.data(), nl * h);
  const T* du = full_b_.data() + row0 * h;
  for (std::int64_t i = 0; i < nl; ++i)
    layer_norm_backward_row(x_.data() + i * h, gain1, du + i * h, dx_.data() + i * h, dgain1, dbias1, h);
  // With SP each rank summed the norms' gradients over its own rows only.
  if (sp) collective(times, collectives::Op::AllReduce, "layer-norm weight gradients", true, dnorms_.data(), 4 * h);
}

template <typename T>
std::span<T> RankLayer<T>::parameter(Parameter which) {
  switch (which) {
    case Parameter::Wqkv:
      return wqkv_.span();
    case Parameter::Wo:
      return wo_.span();
    case Parameter::W1:
      return w1_.span();
    case Parameter::W2:
      return w2_.span();
    case Parameter::Norms:
      return norms_.span();
  }
  return {};
}

template <typename T>
RankStepTimes RankLayer<T>::step() {
  RankStepTimes times;
  const Stopwatch watch;
  const double cpu_before = thread_cpu_us();
  forward(times);
  backward(times);
  times.step_us = watch.elapsed_us();
  times.step_cpu_us = thread_cpu_us() - cpu_before;
  times.compute_us = times.step_us - times.comm_us;
  times.compute_cpu_us = times.step_cpu_us - times.comm_cpu_us;
  return times;
}

template class RankLayer<float>;
template class RankLayer<double>;

}  // namespace dlsys::tensor
