// The mixed-precision training loop of mixed_precision_mlp.h: OpenBLAS sgemm on operands already rounded to the
// format (fp32 accumulation, as a tensor core's), each output rounded once, Adam on fp32 master weights.
#include "kernels/precision/mixed_precision_mlp.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <span>

#include "kernels/common/seeded_fill.h"

namespace dlsys::precision {

namespace {

// Offsets of each tensor in the flat parameter vector: W1 (hidden, inputs), b1, W2 (hidden, hidden), b2,
// W3 (outputs, hidden), b3. Layers compute y = x W^T + b, as torch.nn.Linear does.
struct ParameterLayout {
  std::int64_t w1, b1, w2, b2, w3, b3, total;
  explicit ParameterLayout(const MlpShape& s) {
    w1 = 0;
    b1 = w1 + std::int64_t(s.hidden) * s.inputs;
    w2 = b1 + s.hidden;
    b2 = w2 + std::int64_t(s.hidden) * s.hidden;
    w3 = b2 + s.hidden;
    b3 = w3 + std::int64_t(s.outputs) * s.hidden;
    total = b3 + s.outputs;
  }
};

// c (m, n) = a (m, k) b^T, b stored (n, k).
void gemm_abt(int m, int n, int k, const float* a, const float* b, float* c) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, a, k, b, k, 0.0f, c, n);
}
// c (m, n) = a (m, k) b (k, n).
void gemm_ab(int m, int n, int k, const float* a, const float* b, float* c) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
}
// c (m, n) = a^T b with a stored (k, m) and b (k, n): a weight gradient summed over the batch.
void gemm_atb(int m, int n, int k, const float* a, const float* b, float* c) {
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, m, n, k, 1.0f, a, m, b, n, 0.0f, c, n);
}

void add_bias(int rows, int cols, const float* bias, float* x) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) x[std::int64_t(r) * cols + c] += bias[c];
}

void column_sums(int rows, int cols, const float* x, float* sums) {
  std::fill(sums, sums + cols, 0.0f);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) sums[c] += x[std::int64_t(r) * cols + c];
}

// Fills a PyTorch-Linear-like layer: U(-bound, bound) weights and biases with bound = gain / sqrt(fan_in).
void fill_layer(float* w, std::int64_t w_count, float* b, int b_count, int fan_in, float gain, std::uint32_t seed) {
  const float bound = gain / std::sqrt(float(fan_in));
  fill_seeded_uniform({w, std::size_t(w_count)}, spread_seed(seed), bound);
  fill_seeded_uniform({b, std::size_t(b_count)}, spread_seed(seed + 1000), bound);
}

std::vector<float> init_weights(const MlpShape& s, float gain, std::uint32_t seed) {
  const ParameterLayout l(s);
  std::vector<float> w(std::size_t(l.total));
  fill_layer(&w[l.w1], l.b1 - l.w1, &w[l.b1], s.hidden, s.inputs, gain, seed);
  fill_layer(&w[l.w2], l.b2 - l.w2, &w[l.b2], s.hidden, s.hidden, gain, seed + 1);
  fill_layer(&w[l.w3], l.b3 - l.w3, &w[l.b3], s.outputs, s.hidden, gain, seed + 2);
  return w;
}

// Buffers for one batch, and the forward pass in the format. `weights` are already rounded to the format.
struct Activations {
  int batch = 0;
  std::vector<float> x, z1, z2, y;  // inputs (rounded), pre-activations, outputs; ReLU is applied in place to copies
  std::vector<float> a1, a2;
  Activations(const MlpShape& s, int b)
      : batch(b),
        x(std::size_t(b) * s.inputs),
        z1(std::size_t(b) * s.hidden),
        z2(std::size_t(b) * s.hidden),
        y(std::size_t(b) * s.outputs),
        a1(std::size_t(b) * s.hidden),
        a2(std::size_t(b) * s.hidden) {}
};

void relu(const std::vector<float>& z, std::vector<float>& a) {
  for (std::size_t i = 0; i < z.size(); ++i) a[i] = z[i] > 0.0f ? z[i] : 0.0f;
}

// Returns the sum of squared errors against `targets` (fp32 outputs compared in double).
double forward(const MlpShape& s, const ParameterLayout& l, const float* weights, Format format, const float* inputs,
               const float* targets, Activations& act) {
  const int b = act.batch;
  std::copy(inputs, inputs + act.x.size(), act.x.begin());
  round_in_place(format, act.x);
  gemm_abt(b, s.hidden, s.inputs, act.x.data(), weights + l.w1, act.z1.data());
  add_bias(b, s.hidden, weights + l.b1, act.z1.data());
  round_in_place(format, act.z1);
  relu(act.z1, act.a1);
  gemm_abt(b, s.hidden, s.hidden, act.a1.data(), weights + l.w2, act.z2.data());
  add_bias(b, s.hidden, weights + l.b2, act.z2.data());
  round_in_place(format, act.z2);
  relu(act.z2, act.a2);
  gemm_abt(b, s.outputs, s.hidden, act.a2.data(), weights + l.w3, act.y.data());
  add_bias(b, s.outputs, weights + l.b3, act.y.data());
  round_in_place(format, act.y);
  double squared = 0;
  for (std::size_t i = 0; i < act.y.size(); ++i) {
    const double e = double(act.y[i]) - double(targets[i]);
    squared += e * e;
  }
  return squared;
}

// Rounds a gradient tensor, adding to the step's counts and, on snapshot steps, keeping its values before rounding.
struct GradientRounding {
  Format format;
  StepRecord* record;
  std::vector<float>* snapshot;
  void operator()(std::span<float> values) {
    if (snapshot) snapshot->insert(snapshot->end(), values.begin(), values.end());
    const RoundingCounts counts = round_in_place(format, values);
    record->gradient_values += counts.nonzero;
    record->flushed += counts.flushed;
    record->overflowed += counts.overflowed;
  }
};

class SingleThreadedBlas {  // the sizes are small, and one thread keeps every run's sums in the same order
 public:
  SingleThreadedBlas() : saved_(openblas_get_num_threads()) { openblas_set_num_threads(1); }
  ~SingleThreadedBlas() { openblas_set_num_threads(saved_); }
  SingleThreadedBlas(const SingleThreadedBlas&) = delete;
  SingleThreadedBlas& operator=(const SingleThreadedBlas&) = delete;

 private:
  int saved_;
};

}  // namespace

std::int64_t parameter_count(const MlpShape& shape) { return ParameterLayout(shape).total; }

MlpLayout mlp_layout(const MlpShape& shape) {
  const ParameterLayout l(shape);
  return {l.w1, l.b1, l.w2, l.b2, l.w3, l.b3, l.total};
}

void mlp_forward_fp32(const MlpShape& s, const float* weights, const float* inputs, int samples, float* outputs,
                      float* hidden1) {
  SingleThreadedBlas one_thread;
  const ParameterLayout l(s);
  Activations act(s, samples);
  const std::vector<float> no_targets(act.y.size(), 0.0f);
  forward(s, l, weights, Format::Fp32, inputs, no_targets.data(), act);
  std::copy(act.y.begin(), act.y.end(), outputs);
  if (hidden1) std::copy(act.a1.begin(), act.a1.end(), hidden1);
}

Problem make_problem(const ProblemSpec& spec) {
  const MlpShape& s = spec.shape;
  Problem p;
  p.spec = spec;
  const std::int64_t samples = std::int64_t(spec.batch) * spec.batches;
  p.inputs.resize(std::size_t(samples * s.inputs));
  fill_seeded_uniform(p.inputs, spread_seed(spec.seed + 7), std::sqrt(3.0f));  // unit variance
  // The teacher: the same architecture with larger weights, so its function is not nearly linear.
  const std::vector<float> teacher = init_weights(s, float(spec.teacher_gain), spec.seed + 100);
  const ParameterLayout l(s);
  p.targets.resize(std::size_t(samples * s.outputs));
  {
    SingleThreadedBlas one_thread;
    Activations act(s, int(samples));
    forward(s, l, teacher.data(), Format::Fp32, p.inputs.data(), p.targets.data(), act);
    for (std::size_t i = 0; i < p.targets.size(); ++i) p.targets[i] = float(spec.target_scale * act.y[i]);
  }
  double mean = 0, squares = 0;
  for (float t : p.targets) mean += t;
  mean /= double(p.targets.size());
  for (float t : p.targets) squares += (t - mean) * (t - mean);
  const double target_std = std::sqrt(squares / double(p.targets.size()));
  std::vector<float> noise(p.targets.size());
  fill_seeded_uniform(noise, spread_seed(spec.seed + 9), float(std::sqrt(3.0) * spec.noise * target_std));
  double noise_squares = 0;
  for (std::size_t i = 0; i < noise.size(); ++i) {
    const float before = p.targets[i];
    p.targets[i] += noise[i];
    const double realised = double(p.targets[i]) - double(before);
    noise_squares += realised * realised;
  }
  p.noise_floor = noise_squares / double(noise.size());
  p.initial_weights = init_weights(s, 1.0f, spec.seed + 200);
  // The student's output layer starts at the targets' scale, as a well-initialised network's outputs match its data.
  for (std::int64_t i = l.w3; i < l.total; ++i) p.initial_weights[std::size_t(i)] *= float(spec.target_scale);
  return p;
}

TrainResult train_mlp(const Problem& problem, const TrainOptions& options,
                      const std::function<void(int step)>& between_steps) {
  SingleThreadedBlas one_thread;
  const MlpShape& s = problem.spec.shape;
  const ParameterLayout l(s);
  const int b = problem.spec.batch;
  const double elements = double(b) * s.outputs;  // the loss is the mean over these
  const double loss_weight = options.loss_weight;
  const Format format = options.format;

  std::vector<float> master = problem.initial_weights, weights(master.size()), grads(master.size());
  std::vector<float> adam_m(master.size(), 0.0f), adam_v(master.size(), 0.0f);
  Activations act(s, b);
  std::vector<float> dy(std::size_t(b) * s.outputs), da2(std::size_t(b) * s.hidden), da1(std::size_t(b) * s.hidden);
  LossScaler scaler(options.scaling ? options.scaler : ScalerConfig{.init_scale = 1.0});

  TrainResult result;
  result.gradient_snapshots.resize(options.snapshot_steps.size());
  int adam_steps = 0;
  for (int step = 0; step < options.steps; ++step) {
    if (between_steps) between_steps(step);
    const int batch_index = step % problem.spec.batches;
    const float* x = problem.inputs.data() + std::int64_t(batch_index) * b * s.inputs;
    const float* t = problem.targets.data() + std::int64_t(batch_index) * b * s.outputs;
    StepRecord record;
    std::vector<float>* snapshot = nullptr;
    for (std::size_t h = 0; h < options.snapshot_steps.size(); ++h)
      if (options.snapshot_steps[h] == step) snapshot = &result.gradient_snapshots[h];
    GradientRounding round_gradient{format, &record, snapshot};

    weights = master;
    round_in_place(format, weights);
    record.loss = loss_weight * forward(s, l, weights.data(), format, x, t, act) / elements;

    // Backward of scale x mean((y - t)^2): every gradient below is of the scaled loss.
    const double scale = scaler.scale();
    record.scale_used = scale;
    for (std::size_t i = 0; i < dy.size(); ++i)
      dy[i] = float(scale * loss_weight * 2.0 * (double(act.y[i]) - t[i]) / elements);
    round_gradient(dy);
    gemm_atb(s.outputs, s.hidden, b, dy.data(), act.a2.data(), &grads[l.w3]);
    column_sums(b, s.outputs, dy.data(), &grads[l.b3]);
    gemm_ab(b, s.hidden, s.outputs, dy.data(), weights.data() + l.w3, da2.data());
    round_gradient(da2);
    for (std::size_t i = 0; i < da2.size(); ++i)
      if (act.z2[i] <= 0.0f) da2[i] = 0.0f;
    gemm_atb(s.hidden, s.hidden, b, da2.data(), act.a1.data(), &grads[l.w2]);
    column_sums(b, s.hidden, da2.data(), &grads[l.b2]);
    gemm_ab(b, s.hidden, s.hidden, da2.data(), weights.data() + l.w2, da1.data());
    round_gradient(da1);
    for (std::size_t i = 0; i < da1.size(); ++i)
      if (act.z1[i] <= 0.0f) da1[i] = 0.0f;
    gemm_atb(s.hidden, s.inputs, b, da1.data(), act.x.data(), &grads[l.w1]);
    column_sums(b, s.hidden, da1.data(), &grads[l.b1]);
    round_gradient(grads);

    bool found_inf = false;
    for (float g : grads) found_inf |= !std::isfinite(g);
    if (options.scaling) {
      const ScalerEvent event = scaler.update(found_inf);
      record.skipped = event == ScalerEvent::Skipped;
      record.grew = event == ScalerEvent::Grew;
    }
    record.scale_after = scaler.scale();
    if (!record.skipped) {
      // torch.optim.Adam's update, in fp32, on the unscaled gradients.
      ++adam_steps;
      constexpr float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
      const float lr = float(options.learning_rate);
      const float correction1 = 1.0f - std::pow(beta1, float(adam_steps));
      const float correction2_root = std::sqrt(1.0f - std::pow(beta2, float(adam_steps)));
      const float unscale = float(1.0 / scale);
      for (std::size_t i = 0; i < master.size(); ++i) {
        const float g = grads[i] * unscale;
        adam_m[i] = beta1 * adam_m[i] + (1.0f - beta1) * g;
        adam_v[i] = beta2 * adam_v[i] + (1.0f - beta2) * g * g;
        const float denominator = std::sqrt(adam_v[i]) / correction2_root + eps;
        master[i] -= lr / correction1 * adam_m[i] / denominator;
      }
    } else {
      ++result.skipped_steps;
    }
    result.gradient_values += record.gradient_values;
    result.flushed += record.flushed;
    result.steps.push_back(record);
  }

  // The whole data set with the final weights, in the format.
  weights = master;
  round_in_place(format, weights);
  double squared = 0;
  for (int batch_index = 0; batch_index < problem.spec.batches; ++batch_index)
    squared += forward(s, l, weights.data(), format, problem.inputs.data() + std::int64_t(batch_index) * b * s.inputs,
                       problem.targets.data() + std::int64_t(batch_index) * b * s.outputs, act);
  result.final_loss = loss_weight * squared / (elements * problem.spec.batches);
  result.final_weights = std::move(master);
  return result;
}

}  // namespace dlsys::precision
