#pragma once
// Model-state memory and communication of data-parallel training with mixed-precision Adam, per rank, for ZeRO's
// stages [EXT] (Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models", SC 2020,
// section 5 and figure 1). Psi parameters, N data-parallel ranks, K bytes of optimizer state per parameter (Adam with
// fp32 master weights: master 4 + first moment 4 + second moment 4 = 12):
//   stage 0 (DDP)                   (2 + 2 + K) Psi          16-bit weights, 16-bit gradients, optimizer, replicated
//   stage 1 (optimizer sharded)     (2 + 2) Psi + K Psi / N
//   stage 2 (+ gradients sharded)   2 Psi + (2 + K) Psi / N
//   stage 3 (+ weights sharded)     (2 + 2 + K) Psi / N
// Communication per step, in elements each rank sends (the paper's count, the ring's 2 (N-1)/N rounded up to 2):
//   stages 0-2: 2 Psi (all-reduce = reduce-scatter Psi + all-gather Psi); stage 3: 3 Psi (an all-gather of the
//   weights before the forward pass, another before the backward pass, a reduce-scatter of the gradients).
#include <cstdint>

namespace dlsys::zero {

inline constexpr int kWeightBytes = 2;      // 16-bit working copy of the weights
inline constexpr int kGradientBytes = 2;    // 16-bit gradients
inline constexpr int kOptimizerBytes = 12;  // K: fp32 master weights, Adam's m and v
inline constexpr int kMaxStage = 3;

// One rank's model states in bytes, by kind. Doubles: the calculator's Psi need not be divisible by N.
struct ModelStateBytes {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  double total() const { return weights + gradients + optimizer; }
};

// Bytes each parameter costs in each kind of model state; the defaults are mixed-precision Adam's 2 + 2 + 12 = 16.
struct BytesPerParameter {
  double weights = kWeightBytes;
  double gradients = kGradientBytes;
  double optimizer = kOptimizerBytes;
  double total() const { return weights + gradients + optimizer; }
};

// The paper's formulas for `stage` (0-3) with K = 12, or with another split of the bytes per parameter.
ModelStateBytes model_state_bytes(int stage, double psi, double ranks);
ModelStateBytes model_state_bytes(int stage, double psi, double ranks, const BytesPerParameter& bytes);

// The same in whole bytes, for the lab's model, where Psi is a multiple of N (the run refuses anything else).
struct ExactModelStateBytes {
  std::int64_t weights = 0;
  std::int64_t gradients = 0;
  std::int64_t optimizer = 0;
  std::int64_t total() const { return weights + gradients + optimizer; }
};
ExactModelStateBytes exact_model_state_bytes(int stage, std::int64_t psi, int ranks);

// The paper's elements per rank per step: 2 Psi for stages 0-2, 3 Psi for stage 3.
double comm_elements_per_step(int stage, double psi);
// What a ring really sends per rank: each reduce-scatter or all-gather of Psi elements sends (N-1)/N Psi.
double ring_comm_elements_per_step(int stage, double psi, double ranks);
// Collectives of Psi elements per step: 2 (stages 0-2: all-reduce counted as reduce-scatter + all-gather) or 3.
int collectives_per_step(int stage);

// Stage 0's model states over stage s's, exactly: 16 / (4 + 12/N), 16 / (2 + 14/N), N. The lecture's "4x, 8x, Nx"
// are the limits as N grows.
double reduction_factor(int stage, double ranks);
// The limit as N grows: 1, 4, 8, and for stage 3 N itself (returned as `ranks`).
double reduction_limit(int stage, double ranks);

}  // namespace dlsys::zero
