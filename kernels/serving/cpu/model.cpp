// The serving model on the CPU: prefill through OpenBLAS sgemm, every other pass through project_rows, attention
// through the kvcache decoder's attention_row.
#include "kernels/serving/model.h"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "engine/errors.h"
#include "kernels/common/cache_flush.h"
#include "kernels/common/seeded_fill.h"
#include "kernels/decoder/decoder.h"

namespace dlsys::serving {

namespace {

constexpr float kNormEpsilon = 1e-5f;

void fill(HostBuffer<float>& buffer, std::uint32_t seed, float scale) {
  fill_seeded_uniform({buffer.data(), buffer.size()}, spread_seed(seed), scale);
}

// h = x / rms(x), no learned scale, as in the kvcache decoder.
void rms_norm(const float* x, float* h, int d) {
  double sum_squares = 0;
  for (int i = 0; i < d; ++i) sum_squares += double(x[i]) * x[i];
  const float inv = 1.0f / std::sqrt(float(sum_squares / d) + kNormEpsilon);
  for (int i = 0; i < d; ++i) h[i] = x[i] * inv;
}

// y (n, cols) = beta y + x W through sgemm: the prompt's rows share every weight they load.
void gemm_rows(const float* x, std::int64_t n, const float* w, int rows, int cols, float* y, float beta) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(n), cols, rows, 1.0f, x, rows, w, cols, beta, y, cols);
}

void scale_layers_from(HostBuffer<float>& buffer, std::int64_t per_layer, int from, float scale) {
  for (std::size_t i = std::size_t(from) * std::size_t(per_layer); i < buffer.size(); ++i) buffer.data()[i] *= scale;
}

}  // namespace

void check_shape(const ModelShape& s) {
  auto positive = [](const char* name, int value) {
    if (value < 1)
      throw BadInput(fmt::format("parameter '{}': value {} is not allowed; allowed: at least 1", name, value));
  };
  positive("d_model", s.d_model);
  positive("layers", s.layers);
  positive("heads", s.heads);
  positive("mlp_dim", s.mlp_dim);
  positive("vocab", s.vocab);
  positive("context", s.context);
  if (s.d_model % s.heads != 0)
    throw BadInput(
        fmt::format("parameter 'd_model': value {} is not a multiple of heads = {}; allowed: a multiple of {}",
                    s.d_model, s.heads, s.heads));
}

std::int64_t parameter_count(const ModelShape& s) {
  const std::int64_t d = s.d_model;
  return 2 * s.vocab * d + s.context * d + s.layers * (4 * d * d + 2 * d * s.mlp_dim);
}

std::int64_t matmul_parameters(const ModelShape& s, int layers) {
  const std::int64_t d = s.d_model;
  return layers * (4 * d * d + 2 * d * s.mlp_dim) + d * s.vocab;
}

std::int64_t kv_bytes_per_token(const ModelShape& s, int layers) {
  decoder::Shape a = s.attention();
  a.layers = layers;
  return decoder::kv_cache_bytes(a, 1);
}

bool evict_weights_from_caches(const Weights& w) {
  for (const HostBuffer<float>* b :
       {&w.embedding, &w.position, &w.wq, &w.wk, &w.wv, &w.wo, &w.w_up, &w.w_down, &w.unembedding})
    evict_from_caches(b->data(), std::size_t(b->size_bytes()));
  return can_evict_from_caches();
}

Weights make_weights(const ModelShape& s, MemoryLedger& ledger, std::uint32_t seed, int quiet_from, float quiet_scale) {
  check_shape(s);
  const std::int64_t d = s.d_model, m = s.mlp_dim, L = s.layers;
  auto buffer = [&](std::int64_t count) { return HostBuffer<float>(ledger, "weights", std::size_t(count)); };
  Weights w{buffer(s.vocab * d), buffer(s.context * d), buffer(L * d * d), buffer(L * d * d),  buffer(L * d * d),
            buffer(L * d * d),   buffer(L * d * m),     buffer(L * m * d), buffer(d * s.vocab)};
  // Uniform values of variance 1 / fan_in (scale sqrt(3 / fan_in)) keep activations near unit size.
  const float from_d = std::sqrt(3.0f / float(d)), from_m = std::sqrt(3.0f / float(m));
  fill(w.embedding, seed + 1, 1.0f);
  fill(w.position, seed + 2, 0.5f);
  fill(w.wq, seed + 3, from_d);
  fill(w.wk, seed + 4, from_d);
  fill(w.wv, seed + 5, from_d);
  fill(w.wo, seed + 6, from_d);
  fill(w.w_up, seed + 7, from_d);
  fill(w.w_down, seed + 8, from_m);
  fill(w.unembedding, seed + 9, from_d);
  scale_layers_from(w.wo, d * d, quiet_from, quiet_scale);
  scale_layers_from(w.w_down, m * d, quiet_from, quiet_scale);
  return w;
}

Sequence::Sequence(const ModelShape& s, int layers, MemoryLedger& ledger)
    : context_(s.context),
      d_(s.d_model),
      k_(ledger, "kv", std::size_t(layers) * s.context * s.d_model),
      v_(ledger, "kv", std::size_t(layers) * s.context * s.d_model) {}

Model::Model(const ModelShape& s, const Weights& w, int layers, MemoryLedger& ledger, int max_rows)
    : shape_(s),
      weights_(w),
      layers_(layers),
      max_rows_(std::max(max_rows, s.context)),
      x_(ledger, "activations", std::size_t(max_rows_) * s.d_model),
      h_(ledger, "activations", std::size_t(max_rows_) * s.d_model),
      q_(ledger, "activations", std::size_t(max_rows_) * s.d_model),
      k_(ledger, "activations", std::size_t(max_rows_) * s.d_model),
      v_(ledger, "activations", std::size_t(max_rows_) * s.d_model),
      attended_(ledger, "activations", std::size_t(max_rows_) * s.d_model),
      up_(ledger, "activations", std::size_t(max_rows_) * s.mlp_dim),
      logits_(ledger, "activations", std::size_t(max_rows_) * s.vocab),
      scores_(ledger, "activations", std::size_t(s.context)) {
  check_shape(s);
  if (layers < 1 || layers > s.layers) throw std::logic_error("Model: layers out of range");
}

double Model::token_matmul_flops() const { return 2.0 * double(matmul_parameters(shape_, layers_)); }

double Model::token_attention_flops(std::int64_t attended) const {
  return double(layers_) * 4.0 * double(shape_.d_model) * double(attended);  // scores and weighted values
}

// One layer over n rows held in x_: either the rows of `rows` (any sequences) or a prompt of `prefill_sequence`.
void Model::layer_pass(int l, std::int64_t n, const std::vector<Row>* rows, Sequence* prefill_sequence, bool gemm) {
  const int d = shape_.d_model, m = shape_.mlp_dim;
  const std::int64_t dd = std::int64_t(d) * d, dm = std::int64_t(d) * m;
  auto project = gemm ? gemm_rows : project_rows;
  for (std::int64_t i = 0; i < n; ++i) rms_norm(x_.data() + i * d, h_.data() + i * d, d);
  project(h_.data(), n, weights_.wq.data() + l * dd, d, d, q_.data(), 0.0f);
  project(h_.data(), n, weights_.wk.data() + l * dd, d, d, k_.data(), 0.0f);
  project(h_.data(), n, weights_.wv.data() + l * dd, d, d, v_.data(), 0.0f);
  // Every row's K and V go into its sequence's cache first, so a later row of the same sequence sees them.
  for (std::int64_t i = 0; i < n; ++i) {
    Sequence& seq = rows ? *(*rows)[std::size_t(i)].sequence : *prefill_sequence;
    const std::int64_t pos = rows ? (*rows)[std::size_t(i)].position : i;
    std::copy_n(k_.data() + i * d, d, seq.k(l) + pos * d);
    std::copy_n(v_.data() + i * d, d, seq.v(l) + pos * d);
  }
  const decoder::Shape a = shape_.attention();
  for (std::int64_t i = 0; i < n; ++i) {
    Sequence& seq = rows ? *(*rows)[std::size_t(i)].sequence : *prefill_sequence;
    const std::int64_t pos = rows ? (*rows)[std::size_t(i)].position : i;
    decoder::attention_row(a, q_.data() + i * d, seq.k(l), seq.v(l), pos + 1, scores_.data(), attended_.data() + i * d);
  }
  project(attended_.data(), n, weights_.wo.data() + l * dd, d, d, x_.data(), 1.0f);  // residual
  for (std::int64_t i = 0; i < n; ++i) rms_norm(x_.data() + i * d, h_.data() + i * d, d);
  project(h_.data(), n, weights_.w_up.data() + l * dm, d, m, up_.data(), 0.0f);
  for (std::int64_t i = 0; i < n * m; ++i) up_.data()[i] = std::max(up_.data()[i], 0.0f);  // ReLU
  project(up_.data(), n, weights_.w_down.data() + l * dm, m, d, x_.data(), 1.0f);          // residual
}

int Model::prefill(Sequence& seq, const std::vector<int>& prompt) {
  const std::int64_t n = std::int64_t(prompt.size());
  if (n < 1 || n > shape_.context) throw std::logic_error("Model::prefill: prompt does not fit the context");
  const int d = shape_.d_model;
  for (std::int64_t i = 0; i < n; ++i) {
    const float* e = weights_.embedding.data() + std::int64_t(prompt[std::size_t(i)]) * d;
    const float* p = weights_.position.data() + i * d;
    for (int j = 0; j < d; ++j) x_.data()[i * d + j] = e[j] + p[j];
  }
  for (int l = 0; l < layers_; ++l) layer_pass(l, n, nullptr, &seq, true);
  seq.length = n;
  // Only the last row's logits matter: the first generated token.
  rms_norm(x_.data() + (n - 1) * d, h_.data(), d);
  project_rows(h_.data(), 1, weights_.unembedding.data(), d, shape_.vocab, logits_.data(), 0.0f);
  return argmax(logits_.data(), shape_.vocab);
}

void Model::forward(const std::vector<Row>& rows, std::vector<int>& next) {
  const std::int64_t n = std::int64_t(rows.size());
  if (n > max_rows_) throw std::logic_error("Model::forward: more rows than the scratch holds");
  const int d = shape_.d_model;
  for (std::int64_t i = 0; i < n; ++i) {
    const Row& r = rows[std::size_t(i)];
    if (r.position < 0 || r.position >= shape_.context)
      throw std::logic_error("Model::forward: position outside the context");
    const float* e = weights_.embedding.data() + std::int64_t(r.token) * d;
    const float* p = weights_.position.data() + r.position * d;
    for (int j = 0; j < d; ++j) x_.data()[i * d + j] = e[j] + p[j];
  }
  for (int l = 0; l < layers_; ++l) layer_pass(l, n, &rows, nullptr, false);
  for (std::int64_t i = 0; i < n; ++i) rms_norm(x_.data() + i * d, h_.data() + i * d, d);
  project_rows(h_.data(), n, weights_.unembedding.data(), d, shape_.vocab, logits_.data(), 0.0f);
  next.resize(std::size_t(n));
  for (std::int64_t i = 0; i < n; ++i) {
    next[std::size_t(i)] = argmax(logits_.data() + i * shape_.vocab, shape_.vocab);
    Sequence& seq = *rows[std::size_t(i)].sequence;
    seq.length = std::max(seq.length, rows[std::size_t(i)].position + 1);
  }
}

// Rows of W are streamed once for all n rows (the batch shares each weight it loads), four at a time so each output
// element is loaded and stored once per four terms. Every output element still accumulates its terms one by one in
// the order i = 0, 1, ..., with the same code whatever n is, so one row's result never depends on the others.
void project_rows(const float* x, std::int64_t n, const float* w, int rows, int cols, float* y, float beta) {
  for (std::int64_t r = 0; r < n; ++r) {
    float* yr = y + r * cols;
    if (beta == 0.0f)
      std::fill(yr, yr + cols, 0.0f);
    else if (beta != 1.0f)
      for (int j = 0; j < cols; ++j) yr[j] *= beta;
  }
  int i = 0;
  for (; i + 4 <= rows; i += 4) {
    const float* __restrict w0 = w + std::int64_t(i) * cols;
    const float* __restrict w1 = w0 + cols;
    const float* __restrict w2 = w1 + cols;
    const float* __restrict w3 = w2 + cols;
    for (std::int64_t r = 0; r < n; ++r) {
      const float* xr = x + r * rows + i;
      const float a0 = xr[0], a1 = xr[1], a2 = xr[2], a3 = xr[3];
      float* __restrict yr = y + r * cols;
      for (int j = 0; j < cols; ++j) {
        float t = yr[j];
        t += a0 * w0[j];
        t += a1 * w1[j];
        t += a2 * w2[j];
        t += a3 * w3[j];
        yr[j] = t;
      }
    }
  }
  for (; i < rows; ++i) {
    const float* __restrict wi = w + std::int64_t(i) * cols;
    for (std::int64_t r = 0; r < n; ++r) {
      const float a = x[r * rows + i];
      float* __restrict yr = y + r * cols;
      for (int j = 0; j < cols; ++j) yr[j] += a * wi[j];
    }
  }
}

int argmax(const float* logits, int count) { return int(std::max_element(logits, logits + count) - logits); }

}  // namespace dlsys::serving
