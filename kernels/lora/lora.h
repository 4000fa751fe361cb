#pragma once
// Fine-tuning one linear layer y = W' x three ways, each with Adam on its trainable parameters only:
//   full   W' is trained itself: d k parameters;
//   lora   W stays frozen in fp32, W' = W + (alpha / r) B A with B (d, r) zero at the start and A (r, k) random, so
//          W' = W at step 0 (Hu et al. 2021): r (d + k) parameters;
//   qlora  as lora, but the frozen W is stored as NF4 codes with double-quantized block scales (kernels/quant,
//          Dettmers et al. 2023) and dequantized a panel of rows at a time in every forward pass.
// The adapter path computes y = W x + (alpha / r) B (A x): the d x k update B A is never formed while training.
// The task: a target W* = W + a rank-t update + noise, on inputs whose rows are orthogonal (X^T X = n I), so the loss
// (mean squared output error) is exactly ||W' - W*||_F^2 / d, and the best any rank-r update can reach is the sum of
// the squared singular values of W* - W past the r-th, over d (Eckart and Young). Everything is fp32; the ledger
// records each training's buffers under the tags below.
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "engine/ledger.h"
#include "engine/measure.h"

namespace dlsys::lora {

enum class Method { Full, Lora, Qlora };
const char* method_name(Method method);

// The memory ledger's tags for one training.
inline constexpr const char* kFrozen = "frozen";            // W: fp32, or NF4 codes and scales
inline constexpr const char* kTrainable = "trainable";      // W' (full), or B and A
inline constexpr const char* kGradients = "gradients";      // one fp32 gradient per trainable parameter
inline constexpr const char* kOptimizer = "optimizer";      // Adam's m and v, fp32
inline constexpr const char* kActivations = "activations";  // outputs, errors, adapter hidden values
inline constexpr const char* kWorkspace = "workspace";      // transposed copies, the dequantized panel

inline constexpr int kAdamStateBytesPerParameter = 8;  // m and v, fp32 each
inline constexpr int kQloraPanelRows = 16;             // rows of W dequantized at a time
inline constexpr int kNf4Block = 64;                   // QLoRA's block of weights per scale

// r (d + k): B's d r and A's r k; 2 d r when d = k.
constexpr std::int64_t lora_parameters(std::int64_t d, std::int64_t k, std::int64_t r) { return r * (d + k); }

// Bytes of W (d, k) as QLoRA stores it: 4-bit codes two to a byte (a row starts on a byte), an 8-bit code per block
// of 64 weights, an fp32 second-level scale per 256 of those, and the fp32 mean subtracted from the scales.
std::int64_t nf4_double_quant_bytes(std::int64_t d, std::int64_t k);

// What one training allocates, by tag, from the shapes alone (n inputs).
struct MethodBytes {
  std::int64_t frozen = 0, trainable = 0, gradients = 0, optimizer = 0, activations = 0, workspace = 0;
  std::int64_t total() const { return frozen + trainable + gradients + optimizer + activations + workspace; }
};
MethodBytes method_bytes(Method method, std::int64_t d, std::int64_t k, std::int64_t n, int r);

// The task, shared by every training: W (d, k), W* (d, k), inputs xt (k, n) and x = xt^T (n, k), targets yt = W* xt
// (d, n). n = k.
struct Problem {
  std::int64_t d = 0, k = 0, n = 0;
  int true_rank = 0;
  std::vector<float> w, w_target, xt, x, yt_target;
};
// W uniform in +-1/sqrt(k); the update U S V^T with orthonormal U, V and singular values proportional to t, t-1, ..,
// 1, scaled so its loss is 1; noise uniform with loss `noise_loss`. Seeded: the same on every machine.
Problem make_problem(std::int64_t d, std::int64_t k, int true_rank, double noise_loss, std::uint32_t seed);

struct TrainConfig {
  Method method = Method::Lora;
  int r = 4;  // lora, qlora
  float alpha = 8;
  int steps = 200;
  float learning_rate = 1e-2f;  // Adam's, decayed to 0 along a half cosine over the steps
  std::uint32_t seed = 11;      // A's initial values
};

// The adapter path against the merged weight W + s B A on the same inputs: each output's difference against the
// bound fp32 rounding allows, 2 (k + r + 2) 2^-24 times the sum of its terms' magnitudes (both sums round).
struct MergeCheck {
  double max_abs_diff = 0;
  double worst_share_of_bound = 0;  // max over outputs of |difference| / bound: at most 1 when the paths agree
  bool agrees() const { return worst_share_of_bound <= 1; }
};
// W + scale B A (d, k): the weight inference uses after training.
std::vector<float> merged_weight(const float* w, const float* b, const float* a, float scale, std::int64_t d,
                                 std::int64_t k, int r);
// The adapter path from w, b, a against `merged` x, on the inputs xt (k, n).
MergeCheck check_merged(const float* w, const float* merged, const float* b, const float* a, float scale,
                        const float* xt, std::int64_t d, std::int64_t k, int r, std::int64_t n);

struct TrainResult {
  std::vector<double> loss;  // before each step, then after the last: steps + 1 values
  std::int64_t trainable_parameters = 0;
  MethodBytes peak_bytes;  // each tag's peak in the training's own ledger
  std::int64_t ledger_total_peak_bytes = 0;
  MergeCheck merge;       // lora and qlora: the trained adapters merged into the (dequantized) base
  TimingStats step_time;  // one step (forward, backward, Adam), every step but the first
  double final_loss() const { return loss.empty() ? 0 : loss.back(); }
};
// `cancelled` is called once a step and may throw to stop.
TrainResult train(const Problem& problem, const TrainConfig& config, const std::function<void()>& cancelled = {});

// Inference with an adapter left unmerged: y = W x + s B (A x) costs r (d + k) n more multiply-adds than W x, a share
// r (d + k) / (d k) of it; the merged W' x costs what W x costs. Times both for `tokens` inputs through a seeded d x k
// layer with seeded B and A, in alternation (measure_pair), after checking they agree (check_merged); on the CPU then
// the adapter's own work alone, h = A x and y += s B h: thin products that read x and y through once more for a few
// multiply-adds each, so they run far below the rate of W x.
struct ForwardTiming {
  TimingStats adapter, merged;
  MergeCheck check;
  std::optional<TimingStats> adapter_products;  // CPU only
};
ForwardTiming time_adapter_forward(std::int64_t d, std::int64_t k, std::int64_t tokens, int r, float scale,
                                   const MeasureOptions& options, const std::function<void()>& between = {});

// The layer inference is timed on: W (d, k) and inputs xt (k, n) seeded, B (d, r) and A (r, k) seeded, and the merged
// weight W + scale B A. The same numbers on every machine and device.
struct InferenceLayer {
  std::int64_t d = 0, k = 0, n = 0;
  int r = 0;
  float scale = 0;
  std::vector<float> w, xt, b, a, merged;
};
InferenceLayer make_inference_layer(std::int64_t d, std::int64_t k, std::int64_t tokens, int r, float scale);
ForwardTiming time_adapter_forward(const InferenceLayer& layer, const MeasureOptions& options,
                                   const std::function<void()>& between = {});
// Outputs (d, n) of the layer computed elsewhere (on a GPU, by the adapter path and by the merged weight) against the
// CPU's adapter path, under check_merged's bound (two fp32 evaluations of the same sums): the worst of them.
MergeCheck check_outputs(const InferenceLayer& layer, std::initializer_list<const float*> outputs);
constexpr double adapter_flop_share(std::int64_t d, std::int64_t k, int r) {
  return double(r) * double(d + k) / (double(d) * double(k));
}

// Singular values of m (rows, cols), row-major, descending (one-sided Jacobi in double).
std::vector<double> singular_values(const std::vector<double>& m, std::int64_t rows, std::int64_t cols);
// The least loss a rank-r update reaches from `base` toward the problem's target: sum of sigma_i^2, i > r, over d.
// `base` is W (lora) or the dequantized NF4 W (qlora); `sigma` from singular_values(W* - base).
double eckart_young_loss(const std::vector<double>& sigma, int r, std::int64_t d);
// W* - base in double, for singular_values.
std::vector<double> target_gap(const Problem& problem, const std::vector<float>& base);
// The problem's W as QLoRA stores it, dequantized.
std::vector<float> nf4_dequantized_base(const Problem& problem);

}  // namespace dlsys::lora
