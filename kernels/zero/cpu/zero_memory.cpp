// The ZeRO paper's per-rank model-state bytes and communication volume (see zero_memory.h).
#include "kernels/zero/zero_memory.h"

namespace dlsys::zero {

ModelStateBytes model_state_bytes(int stage, double psi, double ranks) {
  return model_state_bytes(stage, psi, ranks, BytesPerParameter{});
}

ModelStateBytes model_state_bytes(int stage, double psi, double ranks, const BytesPerParameter& bytes) {
  const double weights = bytes.weights * psi, gradients = bytes.gradients * psi, optimizer = bytes.optimizer * psi;
  ModelStateBytes out{weights, gradients, optimizer};
  if (stage >= 1) out.optimizer = optimizer / ranks;
  if (stage >= 2) out.gradients = gradients / ranks;
  if (stage >= 3) out.weights = weights / ranks;
  return out;
}

ExactModelStateBytes exact_model_state_bytes(int stage, std::int64_t psi, int ranks) {
  const std::int64_t shard = psi / ranks;  // Psi is a multiple of N
  ExactModelStateBytes out{kWeightBytes * psi, kGradientBytes * psi, kOptimizerBytes * psi};
  if (stage >= 1) out.optimizer = kOptimizerBytes * shard;
  if (stage >= 2) out.gradients = kGradientBytes * shard;
  if (stage >= 3) out.weights = kWeightBytes * shard;
  return out;
}

int collectives_per_step(int stage) { return stage >= 3 ? 3 : 2; }

double comm_elements_per_step(int stage, double psi) { return collectives_per_step(stage) * psi; }

double ring_comm_elements_per_step(int stage, double psi, double ranks) {
  return collectives_per_step(stage) * (ranks - 1) / ranks * psi;
}

double reduction_factor(int stage, double ranks) {
  const double base = kWeightBytes + kGradientBytes + kOptimizerBytes;
  return base / model_state_bytes(stage, 1.0, ranks).total();
}

double reduction_limit(int stage, double ranks) {
  switch (stage) {
    case 0:
      return 1;
    case 1:
      return double(kWeightBytes + kGradientBytes + kOptimizerBytes) / (kWeightBytes + kGradientBytes);
    case 2:
      return double(kWeightBytes + kGradientBytes + kOptimizerBytes) / kWeightBytes;
    default:
      return ranks;
  }
}

}  // namespace dlsys::zero
