// Full, LoRA and QLoRA fine-tuning of one linear layer (see lora.h); products through OpenBLAS on one thread.
#include "kernels/lora/lora.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <tuple>

#include "engine/host_buffer.h"
#include "engine/measure.h"
#include "kernels/common/seeded_fill.h"
#include "kernels/matmul/matmul.h"
#include "kernels/quant/quantize.h"

namespace dlsys::lora {

namespace {

// c (m, n) = a (m, inner) b (inner, n), row-major.
void multiply(const float* a, const float* b, float* c, std::int64_t m, std::int64_t n, std::int64_t inner) {
  matmul::v3_blas({m, n, inner}, a, b, c, 1);
}

void transpose(const float* in, float* out, std::int64_t rows, std::int64_t cols) {
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) out[j * rows + i] = in[i * cols + j];
}

// Rows of m (rows, cols) made orthonormal in place, in order (modified Gram-Schmidt in double); rows <= cols.
void orthonormalise_rows(std::vector<double>& m, std::int64_t rows, std::int64_t cols) {
  for (std::int64_t i = 0; i < rows; ++i) {
    double* row = &m[std::size_t(i * cols)];
    for (std::int64_t p = 0; p < i; ++p) {
      const double* prev = &m[std::size_t(p * cols)];
      const double dot = std::inner_product(row, row + cols, prev, 0.0);
      for (std::int64_t j = 0; j < cols; ++j) row[j] -= dot * prev[j];
    }
    const double norm = std::sqrt(std::inner_product(row, row + cols, row, 0.0));
    for (std::int64_t j = 0; j < cols; ++j) row[j] /= norm;
  }
}

std::vector<double> seeded_orthonormal_rows(std::int64_t rows, std::int64_t cols, std::uint32_t seed) {
  std::vector<float> raw(std::size_t(rows * cols));
  fill_seeded_uniform(raw, spread_seed(seed));
  std::vector<double> m(raw.begin(), raw.end());
  orthonormalise_rows(m, rows, cols);
  return m;
}

// Adam (Kingma and Ba 2015: beta1 0.9, beta2 0.999, eps 1e-8), bias-corrected, at learning rate `lr`, step t >= 1.
void adam_step(float* p, const float* g, float* m, float* v, std::size_t count, float lr, int t) {
  constexpr float kBeta1 = 0.9f, kBeta2 = 0.999f, kEpsilon = 1e-8f;
  const float c1 = 1.0f - std::pow(kBeta1, float(t)), c2 = 1.0f - std::pow(kBeta2, float(t));
  for (std::size_t i = 0; i < count; ++i) {
    m[i] = kBeta1 * m[i] + (1 - kBeta1) * g[i];
    v[i] = kBeta2 * v[i] + (1 - kBeta2) * g[i] * g[i];
    p[i] -= lr * (m[i] / c1) / (std::sqrt(v[i] / c2) + kEpsilon);
  }
}

// The half-cosine decay: Adam's steady jitter at a constant rate would sit above the small noise floor.
float learning_rate_at(const TrainConfig& c, int step) {
  return c.learning_rate * 0.5f * (1.0f + std::cos(3.14159265f * float(step) / float(c.steps)));
}

// The frozen base as one of the two stores: fp32 rows, or NF4 dequantized a panel of rows at a time.
class FrozenBase {
 public:
  FrozenBase(MemoryLedger& ledger, const Problem& p, bool nf4) : d_(p.d), k_(p.k) {
    if (!nf4) {
      fp32_ = HostBuffer<float>(ledger, kFrozen, p.w.size());
      std::copy(p.w.begin(), p.w.end(), fp32_.data());
      return;
    }
    nf4_ = quant::quantize(p.w.data(), p.d, p.k,
                           {quant::Scheme::Nf4, quant::Granularity::Block, 4, kNf4Block, /*double_quant=*/true});
    // The stored format: codes, 8-bit scale codes, second-level scales and their mean. (The kernel also keeps the
    // restored fp32 scales expanded for its reads, a convenience of the lab's code that QLoRA's does not have.)
    stored_nf4_bytes_ =
        std::int64_t(nf4_.codes.size() + nf4_.scale_codes.size()) + 4 * std::int64_t(nf4_.second_scales.size()) + 4;
    ledger_ = &ledger;
    ledger.allocate(kFrozen, stored_nf4_bytes_);
    panel_ = HostBuffer<float>(ledger, kWorkspace, std::size_t(kQloraPanelRows * p.k));
  }
  ~FrozenBase() {
    if (ledger_ != nullptr) ledger_->release(kFrozen, stored_nf4_bytes_);
  }
  FrozenBase(const FrozenBase&) = delete;
  FrozenBase& operator=(const FrozenBase&) = delete;

  // yt (d, n) = W xt.
  void forward(const float* xt, float* yt, std::int64_t n) {
    if (ledger_ == nullptr) return multiply(fp32_.data(), xt, yt, d_, n, k_);
    for (std::int64_t row = 0; row < d_; row += kQloraPanelRows) {
      const std::int64_t end = std::min(d_, row + kQloraPanelRows);
      quant::dequantize_rows(nf4_, row, end, panel_.data());
      multiply(panel_.data(), xt, yt + row * n, end - row, n, k_);
    }
  }
  std::vector<float> weights() const {
    if (ledger_ == nullptr) return {fp32_.data(), fp32_.data() + fp32_.size()};
    std::vector<float> w(std::size_t(d_ * k_));
    quant::dequantize(nf4_, w.data());
    return w;
  }

 private:
  std::int64_t d_, k_;
  HostBuffer<float> fp32_;
  quant::QuantizedMatrix nf4_;
  MemoryLedger* ledger_ = nullptr;  // set when the base is NF4
  std::int64_t stored_nf4_bytes_ = 0;
  HostBuffer<float> panel_;
};

double mean_squared(const float* e, std::size_t count) {
  double sum = 0;
  for (std::size_t i = 0; i < count; ++i) sum += double(e[i]) * double(e[i]);
  return sum / double(count);
}

TrainResult train_full(const Problem& p, const TrainConfig& c, MemoryLedger& ledger,
                       const std::function<void()>& cancelled) {
  const std::size_t weights = p.w.size(), outputs = std::size_t(p.d * p.n);
  HostBuffer<float> w(ledger, kTrainable, weights), grad(ledger, kGradients, weights);
  HostBuffer<float> m(ledger, kOptimizer, weights), v(ledger, kOptimizer, weights);
  HostBuffer<float> yt(ledger, kActivations, outputs), et(ledger, kActivations, outputs);
  std::copy(p.w.begin(), p.w.end(), w.data());
  std::fill(m.data(), m.data() + weights, 0.0f);
  std::fill(v.data(), v.data() + weights, 0.0f);
  TrainResult r;
  r.trainable_parameters = std::int64_t(weights);
  std::vector<double> step_us;
  for (int step = 0; step <= c.steps; ++step) {
    const Stopwatch clock;
    multiply(w.data(), p.xt.data(), yt.data(), p.d, p.n, p.k);
    for (std::size_t i = 0; i < outputs; ++i) et[i] = yt[i] - p.yt_target[i];
    r.loss.push_back(mean_squared(et.data(), outputs));
    if (step == c.steps) break;
    // dL/dW = 2 / (n d) E X
    multiply(et.data(), p.x.data(), grad.data(), p.d, p.k, p.n);
    const float g_scale = 2.0f / float(p.n * p.d);
    for (std::size_t i = 0; i < weights; ++i) grad[i] *= g_scale;
    adam_step(w.data(), grad.data(), m.data(), v.data(), weights, learning_rate_at(c, step), step + 1);
    if (step > 0) step_us.push_back(clock.elapsed_us());  // the first step is never timed
    if (cancelled) cancelled();
  }
  r.step_time = summarize_us(std::move(step_us), "steady_clock");
  return r;
}

TrainResult train_adapters(const Problem& p, const TrainConfig& c, MemoryLedger& ledger,
                           const std::function<void()>& cancelled) {
  const std::int64_t d = p.d, k = p.k, n = p.n, rank = c.r;
  const float scale = c.alpha / float(rank);
  FrozenBase base(ledger, p, c.method == Method::Qlora);
  // Trainable B (d, r) and A (r, k) side by side in one buffer, so one Adam call updates both.
  const std::size_t b_count = std::size_t(d * rank), count = std::size_t(lora_parameters(d, k, rank));
  HostBuffer<float> params(ledger, kTrainable, count), grad(ledger, kGradients, count);
  HostBuffer<float> m(ledger, kOptimizer, count), v(ledger, kOptimizer, count);
  const std::size_t outputs = std::size_t(d * n);
  HostBuffer<float> yt(ledger, kActivations, outputs), et(ledger, kActivations, outputs);
  HostBuffer<float> h(ledger, kActivations, std::size_t(rank * n));   // A xt (r, n)
  HostBuffer<float> be(ledger, kActivations, std::size_t(rank * n));  // B^T E (r, n)
  HostBuffer<float> ht(ledger, kWorkspace, std::size_t(n * rank));    // h^T
  HostBuffer<float> bt(ledger, kWorkspace, std::size_t(rank * d));    // B^T
  float* b = params.data();
  float* a = params.data() + b_count;
  std::fill(b, b + b_count, 0.0f);
  std::vector<float> a_init(count - b_count);  // PyTorch's default for A: uniform in +-1/sqrt(k)
  fill_seeded_uniform(a_init, spread_seed(c.seed), 1.0f / std::sqrt(float(k)));
  std::copy(a_init.begin(), a_init.end(), a);
  std::fill(m.data(), m.data() + count, 0.0f);
  std::fill(v.data(), v.data() + count, 0.0f);
  TrainResult r;
  r.trainable_parameters = std::int64_t(count);
  std::vector<double> step_us;
  for (int step = 0; step <= c.steps; ++step) {
    const Stopwatch clock;
    // y = W x + s B (A x); et holds B h until it becomes the error.
    base.forward(p.xt.data(), yt.data(), n);
    multiply(a, p.xt.data(), h.data(), rank, n, k);
    multiply(b, h.data(), et.data(), d, n, rank);
    for (std::size_t i = 0; i < outputs; ++i) {
      yt[i] += scale * et[i];
      et[i] = yt[i] - p.yt_target[i];
    }
    r.loss.push_back(mean_squared(et.data(), outputs));
    if (step == c.steps) break;
    // dL/dB = 2 s / (n d) E h^T; dL/dA = 2 s / (n d) B^T E X.
    const float g_scale = 2.0f * scale / float(n * d);
    transpose(h.data(), ht.data(), rank, n);
    multiply(et.data(), ht.data(), grad.data(), d, rank, n);
    transpose(b, bt.data(), d, rank);
    multiply(bt.data(), et.data(), be.data(), rank, n, d);
    multiply(be.data(), p.x.data(), grad.data() + b_count, rank, k, n);
    for (std::size_t i = 0; i < count; ++i) grad[i] *= g_scale;
    adam_step(params.data(), grad.data(), m.data(), v.data(), count, learning_rate_at(c, step), step + 1);
    if (step > 0) step_us.push_back(clock.elapsed_us());  // the first step is never timed
    if (cancelled) cancelled();
  }
  r.step_time = summarize_us(std::move(step_us), "steady_clock");
  const std::vector<float> w = base.weights();
  const std::vector<float> merged = merged_weight(w.data(), b, a, scale, d, k, c.r);
  r.merge = check_merged(w.data(), merged.data(), b, a, scale, p.xt.data(), d, k, c.r, n);
  return r;
}

}  // namespace

const char* method_name(Method method) {
  switch (method) {
    case Method::Full:
      return "full";
    case Method::Lora:
      return "lora";
    case Method::Qlora:
      break;
  }
  return "qlora";
}

std::int64_t nf4_double_quant_bytes(std::int64_t d, std::int64_t k) {
  const std::int64_t groups = d * ((k + kNf4Block - 1) / kNf4Block);
  return d * ((k + 1) / 2) + groups + 4 * ((groups + quant::kDoubleQuantBlock - 1) / quant::kDoubleQuantBlock) + 4;
}

MethodBytes method_bytes(Method method, std::int64_t d, std::int64_t k, std::int64_t n, int r) {
  MethodBytes b;
  const std::int64_t trainable = method == Method::Full ? d * k : lora_parameters(d, k, r);
  b.trainable = 4 * trainable;
  b.gradients = 4 * trainable;
  b.optimizer = kAdamStateBytesPerParameter * trainable;
  b.activations = 4 * 2 * d * n;  // outputs and errors: the same whatever is trained
  if (method == Method::Full) return b;
  b.activations += 4 * 2 * std::int64_t(r) * n;     // A x and B^T E
  b.workspace = 4 * (n * r + std::int64_t(r) * d);  // their transposed copies
  b.frozen = method == Method::Lora ? 4 * d * k : nf4_double_quant_bytes(d, k);
  if (method == Method::Qlora) b.workspace += 4 * std::int64_t(kQloraPanelRows) * k;
  return b;
}

Problem make_problem(std::int64_t d, std::int64_t k, int true_rank, double noise_loss, std::uint32_t seed) {
  if (true_rank > std::min(d, k)) throw std::invalid_argument("true rank above min(d, k)");
  Problem p;
  p.d = d, p.k = k, p.n = k, p.true_rank = true_rank;
  p.w.resize(std::size_t(d * k));
  fill_seeded_uniform(p.w, spread_seed(seed), 1.0f / std::sqrt(float(k)));
  // U S V^T: t orthonormal columns of U (rows of ut) and of V, singular values t, t-1, ..., 1 scaled to loss 1.
  const std::vector<double> ut = seeded_orthonormal_rows(true_rank, d, seed + 1);
  const std::vector<double> vt = seeded_orthonormal_rows(true_rank, k, seed + 2);
  double squares = 0;
  for (int i = 1; i <= true_rank; ++i) squares += double(i) * i;
  const double unit = std::sqrt(double(d) / squares);
  std::vector<float> noise(p.w.size());
  fill_seeded_uniform(noise, spread_seed(seed + 3), float(std::sqrt(3.0 * noise_loss / double(k))));
  p.w_target.resize(p.w.size());
  for (std::int64_t i = 0; i < d; ++i)
    for (std::int64_t j = 0; j < k; ++j) {
      double update = 0;
      for (int t = 0; t < true_rank; ++t)
        update += ut[std::size_t(t * d + i)] * unit * double(true_rank - t) * vt[std::size_t(t * k + j)];
      const std::size_t at = std::size_t(i * k + j);
      p.w_target[at] = float(double(p.w[at]) + update + double(noise[at]));
    }
  // Inputs: n = k orthogonal rows of length sqrt(n), so X^T X = n I and the loss is ||W' - W*||^2 / d.
  const std::vector<double> q = seeded_orthonormal_rows(k, p.n, seed + 4);
  p.xt.resize(std::size_t(k * p.n));
  for (std::size_t i = 0; i < q.size(); ++i) p.xt[i] = float(q[i] * std::sqrt(double(p.n)));
  p.x.resize(p.xt.size());
  transpose(p.xt.data(), p.x.data(), k, p.n);
  p.yt_target.resize(std::size_t(d * p.n));
  multiply(p.w_target.data(), p.xt.data(), p.yt_target.data(), d, p.n, k);
  return p;
}

std::vector<float> merged_weight(const float* w, const float* b, const float* a, float scale, std::int64_t d,
                                 std::int64_t k, int r) {
  std::vector<float> merged(std::size_t(d * k));
  multiply(b, a, merged.data(), d, k, r);
  for (std::size_t i = 0; i < merged.size(); ++i) merged[i] = w[i] + scale * merged[i];
  return merged;
}

namespace {

// The rounding bound's sums of magnitudes, |W| |x| + s |B| (|A| |x|) (d, n), as products of absolute values in
// double: written as loops they cost d n k (r + 1) operations, minutes on the inference layer.
std::vector<double> magnitude_sums(const float* w, const float* b, const float* a, float scale, const float* xt,
                                   std::int64_t d, std::int64_t k, int r, std::int64_t n) {
  const auto absolute = [](const float* m, std::int64_t count) {
    std::vector<double> out(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i) out[std::size_t(i)] = std::fabs(double(m[i]));
    return out;
  };
  const std::vector<double> abs_w = absolute(w, d * k), abs_x = absolute(xt, k * n), abs_a = absolute(a, r * k),
                            abs_b = absolute(b, d * r);
  std::vector<double> terms(std::size_t(d * n)), abs_ax(std::size_t(r * n));
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(d), int(n), int(k), 1.0, abs_w.data(), int(k),
              abs_x.data(), int(n), 0.0, terms.data(), int(n));
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, r, int(n), int(k), 1.0, abs_a.data(), int(k), abs_x.data(),
              int(n), 0.0, abs_ax.data(), int(n));
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(d), int(n), r, std::fabs(double(scale)), abs_b.data(), r,
              abs_ax.data(), int(n), 1.0, terms.data(), int(n));
  return terms;
}

// Each output's |difference| against 2 (k + r + 2) 2^-24 times its sum of magnitudes.
MergeCheck within_rounding(const std::vector<double>& terms, std::int64_t k, int r,
                           const std::function<double(std::size_t)>& difference) {
  const double u = std::ldexp(1.0, -24);
  MergeCheck check;
  for (std::size_t at = 0; at < terms.size(); ++at) {
    const double diff = std::fabs(difference(at));
    const double bound = 2.0 * double(k + r + 2) * u * terms[at];
    check.max_abs_diff = std::max(check.max_abs_diff, diff);
    check.worst_share_of_bound = std::max(check.worst_share_of_bound, bound > 0 ? diff / bound : diff > 0 ? 2 : 0);
  }
  return check;
}

// Brings every cache line of `values` in once, as a product streaming them through the caches does (one value a
// 64-byte line; the sum keeps the reads).
void read_through(const std::vector<float>& values) {
  float sum = 0;
  for (std::size_t i = 0; i < values.size(); i += 16) sum += values[i];
  volatile float sink = sum;
  (void)sink;
}

// The adapter's own work: h = A x, then y += s B h.
void adapter_products(const InferenceLayer& l, float* y, float* h) {
  multiply(l.a.data(), l.xt.data(), h, l.r, l.n, l.k);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(l.d), int(l.n), l.r, l.scale, l.b.data(), l.r, h, int(l.n),
              1.0f, y, int(l.n));
}

// y = W x + s B (A x) (d, n) in fp32 as a served layer computes it: the last product adds into W x (sgemm's beta).
void adapter_path(const InferenceLayer& l, float* y, float* h) {
  multiply(l.w.data(), l.xt.data(), y, l.d, l.n, l.k);
  adapter_products(l, y, h);
}

}  // namespace

MergeCheck check_merged(const float* w, const float* merged, const float* b, const float* a, float scale,
                        const float* xt, std::int64_t d, std::int64_t k, int r, std::int64_t n) {
  // The adapter path and the merged path, each in fp32 the way training computes them.
  std::vector<float> y(std::size_t(d * n)), h(std::size_t(r * n)), bh(std::size_t(d * n)), ym(std::size_t(d * n));
  multiply(w, xt, y.data(), d, n, k);
  multiply(a, xt, h.data(), r, n, k);
  multiply(b, h.data(), bh.data(), d, n, r);
  multiply(merged, xt, ym.data(), d, n, k);
  return within_rounding(magnitude_sums(w, b, a, scale, xt, d, k, r, n), k, r,
                         [&](std::size_t at) { return double(y[at]) + double(scale) * bh[at] - double(ym[at]); });
}

MergeCheck check_outputs(const InferenceLayer& l, std::initializer_list<const float*> outputs) {
  std::vector<float> reference(std::size_t(l.d * l.n)), h(std::size_t(l.r * l.n));
  adapter_path(l, reference.data(), h.data());
  const std::vector<double> terms =
      magnitude_sums(l.w.data(), l.b.data(), l.a.data(), l.scale, l.xt.data(), l.d, l.k, l.r, l.n);
  MergeCheck worst;
  for (const float* y : outputs) {
    const MergeCheck check =
        within_rounding(terms, l.k, l.r, [&](std::size_t at) { return double(y[at]) - double(reference[at]); });
    if (check.worst_share_of_bound >= worst.worst_share_of_bound) worst = check;
  }
  return worst;
}

TrainResult train(const Problem& problem, const TrainConfig& config, const std::function<void()>& cancelled) {
  MemoryLedger ledger;
  TrainResult r = config.method == Method::Full ? train_full(problem, config, ledger, cancelled)
                                                : train_adapters(problem, config, ledger, cancelled);
  r.peak_bytes = {ledger.peak_bytes(kFrozen),    ledger.peak_bytes(kTrainable),   ledger.peak_bytes(kGradients),
                  ledger.peak_bytes(kOptimizer), ledger.peak_bytes(kActivations), ledger.peak_bytes(kWorkspace)};
  r.ledger_total_peak_bytes = ledger.total_peak_bytes();
  return r;
}

InferenceLayer make_inference_layer(std::int64_t d, std::int64_t k, std::int64_t tokens, int r, float scale) {
  InferenceLayer l{d, k, tokens, r, scale, {}, {}, {}, {}, {}};
  l.w.resize(std::size_t(d * k));
  l.xt.resize(std::size_t(k * tokens));
  l.b.resize(std::size_t(d * r));
  l.a.resize(std::size_t(r * k));
  fill_seeded_uniform(l.w, spread_seed(23), 1.0f / std::sqrt(float(k)));
  fill_seeded_uniform(l.xt, spread_seed(24), 1.0f);
  fill_seeded_uniform(l.b, spread_seed(21), 0.1f);
  fill_seeded_uniform(l.a, spread_seed(22), 1.0f / std::sqrt(float(k)));
  l.merged = merged_weight(l.w.data(), l.b.data(), l.a.data(), scale, d, k, r);
  return l;
}

ForwardTiming time_adapter_forward(std::int64_t d, std::int64_t k, std::int64_t tokens, int r, float scale,
                                   const MeasureOptions& options, const std::function<void()>& between) {
  return time_adapter_forward(make_inference_layer(d, k, tokens, r, scale), options, between);
}

ForwardTiming time_adapter_forward(const InferenceLayer& l, const MeasureOptions& options,
                                   const std::function<void()>& between) {
  std::vector<float> y(std::size_t(l.d * l.n)), h(std::size_t(l.r * l.n));
  // As a served layer does it: y = W x, h = A x, then y += s B h inside the last product (sgemm's beta = 1), with no
  // buffer for B h and no separate pass to add it.
  const auto adapter = [&] { adapter_path(l, y.data(), h.data()); };
  const auto merged_forward = [&] { multiply(l.merged.data(), l.xt.data(), y.data(), l.d, l.n, l.k); };
  ForwardTiming t;
  t.check = check_merged(l.w.data(), l.merged.data(), l.b.data(), l.a.data(), l.scale, l.xt.data(), l.d, l.k, l.r, l.n);
  std::tie(t.adapter, t.merged) = measure_pair(adapter, merged_forward, options, between);
  // Timed alone, the thin products would find x and y in the caches; in the layer, W x has just streamed W through
  // them. So W is read through before each call (untimed), as W x reads it.
  const auto as_after_w_x = [&] {
    if (between) between();
    read_through(l.w);
  };
  t.adapter_products = measure([&] { adapter_products(l, y.data(), h.data()); }, options, as_after_w_x);
  return t;
}

std::vector<double> singular_values(const std::vector<double>& m, std::int64_t rows, std::int64_t cols) {
  // One-sided Jacobi (Hestenes) on the columns of the taller orientation: rotate pairs of columns until all are
  // orthogonal; the singular values are then the columns' norms.
  const bool flip = cols > rows;
  const std::int64_t height = flip ? cols : rows, width = flip ? rows : cols;
  std::vector<double> c(std::size_t(height * width));  // column-major: column j at c[j * height]
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      c[std::size_t(flip ? i * height + j : j * height + i)] = m[std::size_t(i * cols + j)];
  for (int sweep = 0; sweep < 60; ++sweep) {
    double off = 0;
    for (std::int64_t p = 0; p < width; ++p)
      for (std::int64_t q = p + 1; q < width; ++q) {
        double* x = &c[std::size_t(p * height)];
        double* y = &c[std::size_t(q * height)];
        double alpha = 0, beta = 0, gamma = 0;
        for (std::int64_t i = 0; i < height; ++i) alpha += x[i] * x[i], beta += y[i] * y[i], gamma += x[i] * y[i];
        if (gamma == 0 || std::fabs(gamma) <= 1e-15 * std::sqrt(alpha * beta)) continue;
        off = std::max(off, std::fabs(gamma) / std::sqrt(alpha * beta));
        const double zeta = (beta - alpha) / (2 * gamma);
        const double t = std::copysign(1.0, zeta) / (std::fabs(zeta) + std::sqrt(1 + zeta * zeta));
        const double cs = 1 / std::sqrt(1 + t * t), sn = cs * t;
        for (std::int64_t i = 0; i < height; ++i) {
          const double xi = x[i], yi = y[i];
          x[i] = cs * xi - sn * yi;
          y[i] = sn * xi + cs * yi;
        }
      }
    if (off < 1e-13) break;
  }
  std::vector<double> sigma(static_cast<std::size_t>(width));
  for (std::int64_t j = 0; j < width; ++j) {
    const double* col = &c[std::size_t(j * height)];
    sigma[std::size_t(j)] = std::sqrt(std::inner_product(col, col + height, col, 0.0));
  }
  std::sort(sigma.begin(), sigma.end(), std::greater<>());
  return sigma;
}

double eckart_young_loss(const std::vector<double>& sigma, int r, std::int64_t d) {
  double rest = 0;
  for (std::size_t i = std::size_t(std::max(r, 0)); i < sigma.size(); ++i) rest += sigma[i] * sigma[i];
  return rest / double(d);
}

std::vector<double> target_gap(const Problem& p, const std::vector<float>& base) {
  std::vector<double> gap(p.w_target.size());
  for (std::size_t i = 0; i < gap.size(); ++i) gap[i] = double(p.w_target[i]) - double(base[i]);
  return gap;
}

std::vector<float> nf4_dequantized_base(const Problem& p) {
  const quant::QuantizedMatrix q =
      quant::quantize(p.w.data(), p.d, p.k, {quant::Scheme::Nf4, quant::Granularity::Block, 4, kNf4Block, true});
  std::vector<float> w(p.w.size());
  quant::dequantize(q, w.data());
  return w;
}

}  // namespace dlsys::lora
