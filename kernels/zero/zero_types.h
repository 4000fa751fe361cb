#pragma once
// What ZeRO training (sharded_training.h on CPU threads, zero_cuda.h on GPUs) takes and gives back. Plain C++17, for
// CUDA files too.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/precision/format.h"
#include "kernels/training/mlp_stack.h"

namespace dlsys::zero {

struct ZeroConfig {
  training::StackShape shape;
  int ranks = 4;
  int stage = 0;
  int rows_per_rank = 8;  // each rank's share of the global batch, every step
  int steps = 3;
  precision::Format dtype = precision::Format::Bf16;  // the 16-bit format of working weights and gradients
  float learning_rate = 1e-3f;
  std::uint32_t seed = 7;
};

// Adam's constants [EXT] (Kingma & Ba, 2015: beta1 0.9, beta2 0.999, eps 1e-8), bias-corrected.
inline constexpr float kBeta1 = 0.9f, kBeta2 = 0.999f, kEpsilon = 1e-8f;

// One rank's peak bytes by tag, from its ledger.
struct RankPeakBytes {
  std::int64_t weights = 0, gradients = 0, optimizer = 0, activations = 0, comm = 0, workspace = 0;
  std::int64_t model_states = 0;  // weights + gradients + optimizer (allocated once, so their peaks add)
  std::int64_t total = 0;         // the peak of everything together
};

// What a rank did, with times from one steady clock (us since the first rank started the last step).
struct RankSpan {
  int rank = 0;
  double start_us = 0, end_us = 0;
  std::string kind;  // "F", "B", "all_reduce", "reduce_scatter", "all_gather", "optimizer"
  int layer = -1;    // -1: the whole model (the optimizer step, stage 1-2's all-gather)
};

// One collective a rank made in the last step.
struct CollectiveRecord {
  std::string op;    // "all_reduce", "reduce_scatter", "all_gather"
  std::string when;  // "forward", "backward", "after step"
  int layer = 0;
  std::int64_t elements = 0;  // the layer's 2 w^2
};

struct ZeroTraining {
  std::vector<float> master_weights;               // fp32, Psi, assembled from every rank's shard after the last step
  std::vector<RankPeakBytes> peaks;                // per rank
  std::vector<std::int64_t> comm_bytes_last_step;  // per rank, counted by the links (fp32 carriers)
  std::vector<CollectiveRecord> collectives;       // rank 0's, last step
  std::vector<double> losses;                      // per step, the global batch's loss
  std::vector<double> step_us;                     // per step, the slowest rank's
  std::vector<RankSpan> spans;                     // the last step, every rank
  std::int64_t link_bytes = 0;                     // the ring's channels, outside every rank's ledger
};

}  // namespace dlsys::zero
