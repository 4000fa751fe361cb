// The decoder's two decode paths on the CPU. Projections go through OpenBLAS: sgemv for the one token a cached step
// feeds, sgemm for the whole prefix a recomputing step feeds. Attention is one plain routine both paths share.
#include "kernels/decoder/decoder.h"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/errors.h"
#include "kernels/common/seeded_fill.h"

namespace dlsys::decoder {

namespace {

constexpr float kNormEpsilon = 1e-5f;

void fill_uniform(HostBuffer<float>& buffer, std::uint32_t seed, float scale) {
  fill_seeded_uniform({buffer.data(), buffer.size()}, spread_seed(seed), scale);
}

// x (d) = token embedding + position embedding.
void embed(const Shape& s, const Weights& w, int token, std::int64_t position, float* x) {
  const float* e = w.embedding.data() + std::int64_t(token) * s.d_model;
  const float* p = w.position.data() + position * s.d_model;
  for (int i = 0; i < s.d_model; ++i) x[i] = e[i] + p[i];
}

// h (d) = x / rms(x): RMSNorm without a learned scale (a scale of ones).
void rms_norm(const float* x, float* h, int d) {
  double sum_squares = 0;
  for (int i = 0; i < d; ++i) sum_squares += double(x[i]) * x[i];
  const float inv = 1.0f / std::sqrt(float(sum_squares / d) + kNormEpsilon);
  for (int i = 0; i < d; ++i) h[i] = x[i] * inv;
}

// y (cols) = beta y + x (rows) W, W: (rows, cols) row-major.
void project_row(const float* x, const float* w, int rows, int cols, float* y, float beta) {
  cblas_sgemv(CblasRowMajor, CblasTrans, rows, cols, 1.0f, w, cols, x, 1, beta, y, 1);
}

// y (n, cols) = beta y + x (n, rows) W.
void project_rows(const float* x, std::int64_t n, const float* w, int rows, int cols, float* y, float beta) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(n), cols, rows, 1.0f, x, rows, w, cols, beta, y, cols);
}

// logits (vocab) = rms_norm(x) U.
void unembed(const Shape& s, const Weights& w, const float* x, float* h, float* logits) {
  rms_norm(x, h, s.d_model);
  project_row(h, w.unembedding.data(), s.d_model, s.vocab, logits, 0.0f);
}

std::int64_t layer_stride(const Shape& s, int cols) { return std::int64_t(s.d_model) * cols; }

}  // namespace

void check_shape(const Shape& s) {
  if (s.d_model < 1 || s.layers < 1 || s.heads < 1 || s.kv_heads < 1 || s.vocab < 1)
    throw BadInput("decoder: d_model, layers, heads, kv_heads and vocab must be at least 1");
  if (s.d_model % s.heads != 0)
    throw BadInput(fmt::format("parameter 'heads': value {} does not divide d_model {}; allowed: a divisor of d_model",
                               s.heads, s.d_model));
  if (s.heads % s.kv_heads != 0)
    throw BadInput(fmt::format("parameter 'kv_heads': value {} does not divide heads {}; allowed: a divisor of heads",
                               s.kv_heads, s.heads));
}

Weights make_random_weights(const Shape& s, std::int64_t max_positions, MemoryLedger& ledger, std::uint32_t seed) {
  check_shape(s);
  const std::int64_t d = s.d_model, kv = s.kv_dim();
  Weights w{
      HostBuffer<float>(ledger, "weights", s.vocab * d),       HostBuffer<float>(ledger, "weights", max_positions * d),
      HostBuffer<float>(ledger, "weights", s.layers * d * d),  HostBuffer<float>(ledger, "weights", s.layers * d * kv),
      HostBuffer<float>(ledger, "weights", s.layers * d * kv), HostBuffer<float>(ledger, "weights", s.layers * d * d),
      HostBuffer<float>(ledger, "weights", d * s.vocab)};
  // Projections scaled by sqrt(3 / fan_in): uniform values of variance 1 / fan_in keep activations near unit size.
  const float projection_scale = std::sqrt(3.0f / float(d));
  fill_uniform(w.embedding, seed + 1, 1.0f);
  fill_uniform(w.position, seed + 2, 0.5f);
  fill_uniform(w.wq, seed + 3, projection_scale);
  fill_uniform(w.wk, seed + 4, projection_scale);
  fill_uniform(w.wv, seed + 5, projection_scale);
  fill_uniform(w.wo, seed + 6, projection_scale);
  fill_uniform(w.unembedding, seed + 7, projection_scale);
  return w;
}

std::int64_t weights_bytes(const Shape& s, std::int64_t max_positions) {
  const std::int64_t d = s.d_model, kv = s.kv_dim();
  return 4 * (2 * s.vocab * d + max_positions * d + s.layers * (2 * d * d + 2 * d * kv));
}

std::int64_t kv_cache_bytes(const Shape& s, std::int64_t tokens) {
  return 2 * std::int64_t(s.layers) * s.kv_heads * s.head_dim() * std::int64_t(sizeof(float)) * tokens;
}

std::int64_t run_bytes(const Shape& s, std::int64_t tokens) {
  const std::int64_t d = s.d_model, kv = s.kv_dim();
  const std::int64_t cached_scratch = 4 * (4 * d + tokens);
  const std::int64_t recompute_scratch = 4 * (tokens * (4 * d + 2 * kv) + tokens);
  return weights_bytes(s, tokens) + kv_cache_bytes(s, tokens) + cached_scratch + recompute_scratch;
}

double flops_cached_step(const Shape& s, std::int64_t position) {
  const double d = s.d_model, kv = s.kv_dim(), n = double(position + 1);
  const double per_layer = 2 * d * d + 4 * d * kv + 4 * n * d + 2 * d * d;  // q; k, v; scores and sum; o
  return s.layers * per_layer + 2 * d * s.vocab;
}

double flops_recompute_step(const Shape& s, std::int64_t position) {
  const double d = s.d_model, kv = s.kv_dim(), n = double(position + 1);
  // Every row is projected; row i attends over i + 1 keys: sum_i 4 (i + 1) d = 2 n (n + 1) d.
  const double per_layer = n * (4 * d * d + 4 * d * kv) + 2 * n * (n + 1) * d;
  return s.layers * per_layer + 2 * d * s.vocab;
}

// Grouped-query attention shares each KV head among a group of query heads.
void attention_row(const Shape& s, const float* q, const float* k, const float* v, std::int64_t n, float* scores,
                   float* out) {
  const int hd = s.head_dim(), kv_dim = s.kv_dim(), group = s.heads / s.kv_heads;
  const float scale = 1.0f / std::sqrt(float(hd));
  for (int head = 0; head < s.heads; ++head) {
    const int kv_offset = (head / group) * hd;
    // scores = scale K_h q_h, then softmax, then out_h = V_h^T p: two products of a row against the head's slice of
    // the cache (a stride of kv_dim between tokens), as every other product of the decoder, with BLAS.
    cblas_sgemv(CblasRowMajor, CblasNoTrans, int(n), hd, scale, k + kv_offset, kv_dim, q + head * hd, 1, 0.0f, scores,
                1);
    const float max_score = *std::max_element(scores, scores + n);
    float total = 0;
    for (std::int64_t j = 0; j < n; ++j) total += (scores[j] = std::exp(scores[j] - max_score));
    cblas_sgemv(CblasRowMajor, CblasTrans, int(n), hd, 1.0f / total, v + kv_offset, kv_dim, scores, 1, 0.0f,
                out + head * hd, 1);
  }
}

int argmax(const float* logits, int count) { return int(std::max_element(logits, logits + count) - logits); }

CachedDecoder::CachedDecoder(const Shape& s, const Weights& w, MemoryLedger& ledger, std::int64_t max_tokens)
    : shape_(s),
      weights_(w),
      max_tokens_(max_tokens),
      k_cache_(ledger, "kv", std::size_t(s.layers) * max_tokens * s.kv_dim()),
      v_cache_(ledger, "kv", std::size_t(s.layers) * max_tokens * s.kv_dim()),
      x_(ledger, "activations", s.d_model),
      h_(ledger, "activations", s.d_model),
      q_(ledger, "activations", s.d_model),
      attended_(ledger, "activations", s.d_model),
      scores_(ledger, "activations", max_tokens) {
  check_shape(s);
}

void CachedDecoder::step(int token, float* logits) {
  if (position_ >= max_tokens_) throw std::logic_error("CachedDecoder: cache is full");
  const Shape& s = shape_;
  const int d = s.d_model, kv = s.kv_dim();
  embed(s, weights_, token, position_, x_.data());
  for (int l = 0; l < s.layers; ++l) {
    float* k_layer = k_cache_.data() + std::int64_t(l) * max_tokens_ * kv;  // (max_tokens, kv_dim)
    float* v_layer = v_cache_.data() + std::int64_t(l) * max_tokens_ * kv;
    rms_norm(x_.data(), h_.data(), d);
    project_row(h_.data(), weights_.wq.data() + l * layer_stride(s, d), d, d, q_.data(), 0.0f);
    // The new token's K and V are appended to the cache; older rows are read, never recomputed.
    project_row(h_.data(), weights_.wk.data() + l * layer_stride(s, kv), d, kv, k_layer + position_ * kv, 0.0f);
    project_row(h_.data(), weights_.wv.data() + l * layer_stride(s, kv), d, kv, v_layer + position_ * kv, 0.0f);
    attention_row(s, q_.data(), k_layer, v_layer, position_ + 1, scores_.data(), attended_.data());
    project_row(attended_.data(), weights_.wo.data() + l * layer_stride(s, d), d, d, x_.data(), 1.0f);  // residual
  }
  unembed(s, weights_, x_.data(), h_.data(), logits);
  ++position_;
}

RecomputeDecoder::RecomputeDecoder(const Shape& s, const Weights& w, MemoryLedger& ledger, std::int64_t max_tokens)
    : shape_(s),
      weights_(w),
      max_tokens_(max_tokens),
      x_(ledger, "scratch", std::size_t(max_tokens) * s.d_model),
      h_(ledger, "scratch", std::size_t(max_tokens) * s.d_model),
      q_(ledger, "scratch", std::size_t(max_tokens) * s.d_model),
      k_(ledger, "scratch", std::size_t(max_tokens) * s.kv_dim()),
      v_(ledger, "scratch", std::size_t(max_tokens) * s.kv_dim()),
      attended_(ledger, "scratch", std::size_t(max_tokens) * s.d_model),
      scores_(ledger, "scratch", max_tokens) {
  check_shape(s);
  tokens_.reserve(max_tokens);
}

void RecomputeDecoder::step(int token, float* logits) {
  if (position() >= max_tokens_) throw std::logic_error("RecomputeDecoder: prefix is full");
  tokens_.push_back(token);
  const Shape& s = shape_;
  const int d = s.d_model, kv = s.kv_dim();
  const std::int64_t n = position();
  for (std::int64_t i = 0; i < n; ++i) embed(s, weights_, tokens_[i], i, x_.data() + i * d);
  for (int l = 0; l < s.layers; ++l) {
    for (std::int64_t i = 0; i < n; ++i) rms_norm(x_.data() + i * d, h_.data() + i * d, d);
    // K and V of the whole prefix, from scratch: this is the work the cache saves.
    project_rows(h_.data(), n, weights_.wq.data() + l * layer_stride(s, d), d, d, q_.data(), 0.0f);
    project_rows(h_.data(), n, weights_.wk.data() + l * layer_stride(s, kv), d, kv, k_.data(), 0.0f);
    project_rows(h_.data(), n, weights_.wv.data() + l * layer_stride(s, kv), d, kv, v_.data(), 0.0f);
    for (std::int64_t i = 0; i < n; ++i)  // causal: row i sees keys 0..i
      attention_row(s, q_.data() + i * d, k_.data(), v_.data(), i + 1, scores_.data(), attended_.data() + i * d);
    project_rows(attended_.data(), n, weights_.wo.data() + l * layer_stride(s, d), d, d, x_.data(), 1.0f);
  }
  unembed(s, weights_, x_.data() + (n - 1) * d, h_.data(), logits);
}

}  // namespace dlsys::decoder
