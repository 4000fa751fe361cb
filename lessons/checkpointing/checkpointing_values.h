#pragma once
// The checkpointing lesson's closed forms and measurements, declared once (engine/lesson_values.h).
#include <cstdint>
#include <string>
#include <vector>

#include "engine/lesson_values.h"

namespace dlsys::checkpointing {

// The real model's activations under each recompute policy (Korthikanti et al.'s formula, 16-bit).
struct CalculatorTheory {
  std::string model;  // the preset's name or the config's path
  std::int64_t layers = 0, hidden = 0, heads = 0, seq = 0, micro_batch = 0;
  double layer_bytes_none = 0;       // s b h (34 + 5 a s / h)
  double layer_bytes_selective = 0;  // s b h 34
  double bytes_none = 0, bytes_selective = 0, bytes_full = 0;
  double selective_saving = 0;  // 1 - selective / none = (5 a s / h) / (34 + 5 a s / h)
  double full_saving = 0;       // 1 - full / none
};

struct CheckpointingTheory {
  int layers = 0, segment_layers = 0, segments = 0, width = 0, expansion = 0, rows = 0;
  std::int64_t boundary_bytes = 0;           // 4 r w: one checkpoint
  std::int64_t layer_bytes = 0;              // 4 r w (1 + e): one layer's input and hidden layer
  std::int64_t keep_all_peak_bytes = 0;      // L layer_bytes + boundary_bytes (the output)
  std::int64_t checkpointed_peak_bytes = 0;  // (L / k) boundary_bytes + k layer_bytes
  double memory_saving = 0;                  // 1 - checkpointed / keep all
  double best_k_real = 0;  // sqrt(L boundary / layer) = sqrt(L / (1 + e)): where L/k + (1+e) k is least
  int best_k = 0;          // the divisor of L with the least peak
  std::int64_t best_k_peak_bytes = 0;
  double chen_best_k = 0;     // sqrt(L): where L / k + k is least (a boundary as large as a layer)
  std::vector<int> divisors;  // the k a run measures
  // Time: every checkpointed step runs one extra forward pass, whatever k.
  double forward_flop = 0;    // 4 r w e w per layer, L layers
  double backward_flop = 0;   // twice the forward
  double recompute_flop = 0;  // the forward again
  double time_ratio = 0;      // (forward + recompute + backward) / (forward + backward) = 4/3
  CalculatorTheory calculator;
};

// One k of the run: the ledger's peak beside the closed form, the step time beside the plain step's, the gradients.
struct SegmentMeasured {
  int segment_layers = 0;
  std::int64_t peak_activation_bytes = 0;
  std::int64_t peak_formula_bytes = 0;
  double step_us = 0, step_min_us = 0, step_max_us = 0;
  double keep_all_us = 0;            // the plain step timed in alternation with this one
  double time_ratio = 0;             // step_us / keep_all_us
  bool gradients_identical = false;  // every gradient equal to the plain step's, bit for bit
};

struct CheckpointingMeasured {
  std::int64_t keep_all_peak_bytes = 0;
  std::int64_t checkpointed_peak_bytes = 0;  // at the chosen k
  double keep_all_step_us = 0, checkpointed_step_us = 0;
  double time_ratio = 0;  // at the chosen k
  // The plain forward pass alone: one extra forward predicts 1 + forward / plain step, whatever backward costs.
  double forward_us = 0;
  double predicted_time_ratio = 0;
  double loss = 0;
  bool peaks_match_formula = false;  // at every k, to the byte
  bool all_gradients_identical = false;
  int measured_best_k = 0;             // the k with the least measured peak
  std::vector<SegmentMeasured> sweep;  // every divisor of L
  // CUDA runs only (the keys are absent from a CPU run's JSON): the plain step on the GPU against the same step on the
  // CPU (OpenBLAS), which sums in other orders.
  bool on_gpu = false;
  double max_rel_err_gpu_vs_cpu = 0;   // max |g_gpu - g_cpu| / max |g_cpu| over every weight's gradient
  double loss_rel_err_gpu_vs_cpu = 0;  // |loss_gpu - loss_cpu| / loss_cpu
  double gpu_vs_cpu_tolerance = 0;     // what both are held to
  // 1 when a check failed: a peak off its formula, a checkpointed step's gradients off the plain step's, or the plain
  // step off the CPU's beyond the tolerance.
  bool checks_wrong = false;
};

DLSYS_VALUES_JSON(CalculatorTheory, model, layers, hidden, heads, seq, micro_batch, layer_bytes_none,
                  layer_bytes_selective, bytes_none, bytes_selective, bytes_full, selective_saving, full_saving)
DLSYS_VALUES_JSON(CheckpointingTheory, layers, segment_layers, segments, width, expansion, rows, boundary_bytes,
                  layer_bytes, keep_all_peak_bytes, checkpointed_peak_bytes, memory_saving, best_k_real, best_k,
                  best_k_peak_bytes, chen_best_k, divisors, forward_flop, backward_flop, recompute_flop, time_ratio,
                  calculator)
DLSYS_VALUES_JSON(SegmentMeasured, segment_layers, peak_activation_bytes, peak_formula_bytes, step_us, step_min_us,
                  step_max_us, keep_all_us, time_ratio, gradients_identical)
DLSYS_VALUES_PART(CheckpointingMeasuredKeys, CheckpointingMeasured, keep_all_peak_bytes, checkpointed_peak_bytes,
                  keep_all_step_us, checkpointed_step_us, time_ratio, forward_us, predicted_time_ratio, loss,
                  peaks_match_formula, all_gradients_identical, measured_best_k, sweep)
DLSYS_VALUES_PART(CheckpointingGpuKeys, CheckpointingMeasured, on_gpu, max_rel_err_gpu_vs_cpu, loss_rel_err_gpu_vs_cpu,
                  gpu_vs_cpu_tolerance, checks_wrong)
inline void to_json(nlohmann::ordered_json& json, const CheckpointingMeasured& measured) {
  write_parts<CheckpointingMeasuredKeys, CheckpointingGpuKeys>(json, measured, measured.on_gpu);
}
inline void from_json(const nlohmann::ordered_json& json, CheckpointingMeasured& measured) {
  read_parts<CheckpointingMeasuredKeys, CheckpointingGpuKeys>(json, measured);
}

}  // namespace dlsys::checkpointing
