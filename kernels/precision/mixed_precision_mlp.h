#pragma once
// A small MLP trained the way mixed-precision training does it, with every 16-bit tensor rounded in software:
//   master weights, Adam's moments and the update in fp32;
//   forward: inputs and a 16-bit copy of the weights, each GEMM accumulated in fp32 and its output (bias added)
//   rounded to the format, ReLU; the loss (mean squared error) in fp32, as autocast computes it;
//   backward: the gradient of the scaled loss rounded to the format, every activation gradient and weight gradient
//   rounded as a 16-bit GEMM would write it; an inf or NaN in a weight gradient skips the step (dynamic scaling);
//   the gradients are unscaled in fp32 before Adam.
// With the format fp32 nothing is rounded: the reference run.
//
// The problem is a seeded teacher-student regression: targets are a random teacher MLP's outputs (times
// `target_scale`) plus noise, so the loss has a floor (the noise) that every format should reach.
#include <cstdint>
#include <functional>
#include <vector>

#include "kernels/precision/float_format.h"
#include "kernels/precision/loss_scaler.h"

namespace dlsys::precision {

struct MlpShape {
  int inputs = 16;
  int hidden = 64;   // two hidden layers of this width
  int outputs = 16;  // the loss is the mean over batch x outputs
};

std::int64_t parameter_count(const MlpShape& shape);

// Where each tensor sits in the flat parameter vector: W1 (hidden, inputs), b1, W2 (hidden, hidden), b2,
// W3 (outputs, hidden), b3. Layers compute y = x W^T + b, as torch.nn.Linear does.
struct MlpLayout {
  std::int64_t w1 = 0, b1 = 0, w2 = 0, b2 = 0, w3 = 0, b3 = 0, total = 0;
};
MlpLayout mlp_layout(const MlpShape& shape);

// The fp32 forward pass over `samples` rows of `inputs`: outputs (samples, outputs) and, when `hidden1` is given, the
// first hidden layer's activations after ReLU (samples, hidden).
void mlp_forward_fp32(const MlpShape& shape, const float* weights, const float* inputs, int samples, float* outputs,
                      float* hidden1 = nullptr);

struct ProblemSpec {
  MlpShape shape;
  int batch = 256;
  int batches = 16;           // the data set is batch x batches samples, visited in order
  double target_scale = 1.0;  // the teacher's outputs are multiplied by this
  double noise = 0.05;        // noise standard deviation, relative to the targets' own
  double teacher_gain = 2.0;  // the teacher's weights are U(-g, g) / sqrt(fan_in): larger g, a less linear function
  std::uint32_t seed = 1;
};

struct Problem {
  ProblemSpec spec;
  std::vector<float> inputs;   // (samples, inputs) row-major
  std::vector<float> targets;  // (samples, outputs)
  std::vector<float> initial_weights;
  double noise_floor = 0;  // the noise's variance: the loss a perfect fit would have
};
Problem make_problem(const ProblemSpec& spec);

struct TrainOptions {
  Format format = Format::Fp32;
  bool scaling = false;
  ScalerConfig scaler;
  int steps = 200;
  double loss_weight = 1.0;         // the loss is loss_weight x mean squared error
  double learning_rate = 1e-3;      // Adam, beta1 0.9, beta2 0.999, eps 1e-8 (PyTorch's defaults)
  std::vector<int> snapshot_steps;  // 0-based steps whose gradients (before rounding) are kept
};

struct StepRecord {
  double loss = 0;                   // the mini-batch's loss, as the format's forward computed it
  double scale_used = 1;             // the scale the backward ran with
  double scale_after = 1;            // after the scaler's update (1 without scaling)
  bool skipped = false;              // an inf or NaN in the gradients: no optimizer step
  bool grew = false;                 // the scaler doubled the scale after this step
  std::int64_t gradient_values = 0;  // non-zero gradient values before rounding, this step
  std::int64_t flushed = 0;          // of those, how many rounded to zero
  std::int64_t overflowed = 0;       // finite values that rounded to inf
};

struct TrainResult {
  std::vector<StepRecord> steps;
  double final_loss = 0;  // the whole data set's loss with the final weights, forward in the format
  int skipped_steps = 0;
  std::int64_t gradient_values = 0, flushed = 0;
  // Every gradient value of each step in TrainOptions::snapshot_steps, before rounding: the output and activation
  // gradients and the weight and bias gradients.
  std::vector<std::vector<float>> gradient_snapshots;
  std::vector<float> final_weights;  // the fp32 master weights after the last step
  double underflow_fraction() const { return gradient_values ? double(flushed) / double(gradient_values) : 0.0; }
};

// `between_steps` runs before each step (cancellation checks); it may throw.
TrainResult train_mlp(const Problem& problem, const TrainOptions& options,
                      const std::function<void(int step)>& between_steps = {});

}  // namespace dlsys::precision
