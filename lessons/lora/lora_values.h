#pragma once
// The LoRA lesson's typed values: closed forms at the parameters (trainable counts, bytes per method, the base's bits
// per parameter, the course's worked numbers, the real-model calculator) and what one run measured (each training's
// loss, its ledger by tag, its step time, the merged weight's check). `dlsys-lab run --json` writes them under
// "theory" and "measured" with these field names as keys.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/lesson_values.h"

namespace dlsys::lora_lesson {

// One training's bytes by the ledger's tags (kernels/lora/lora.h).
struct MethodMemory {
  std::string method;  // "full", "lora", "qlora"
  int r = 0;           // 0 for full
  std::int64_t trainable_parameters = 0;
  std::int64_t frozen_bytes = 0, trainable_bytes = 0, gradient_bytes = 0, optimizer_bytes = 0;
  std::int64_t activation_bytes = 0, workspace_bytes = 0, total_bytes = 0;
};

// A real model's memory under one method (16-bit weights, mixed-precision Adam), by kind.
struct ModelMemory {
  std::string method;
  double trainable_parameters = 0;
  double weight_bytes = 0, gradient_bytes = 0, optimizer_bytes = 0, activation_bytes = 0, total_bytes = 0;
};

// One kind of adapted matrix of a real model: its shape and how many the model has.
struct AdaptedMatrix {
  std::string name;                     // "q_proj"
  std::int64_t rows = 0, cols = 0;      // outputs d and inputs k
  std::int64_t count = 0;               // one per layer
  std::int64_t adapter_parameters = 0;  // r (d + k) for one
};

struct CalculatorTheory {
  std::string model, source;  // the preset or file, and where its numbers come from
  std::string targets;        // "q,k,v,o" or "all linear"
  int r = 0;
  double parameters = 0;         // the whole base model
  double linear_parameters = 0;  // the blocks' linear weights: what QLoRA stores in NF4
  double adapter_parameters = 0;
  double adapter_share = 0;  // of the base's parameters
  std::vector<AdaptedMatrix> matrices;
  std::int64_t layers = 0, hidden = 0, heads = 0, micro_batch = 0, seq = 0;
  double base_activation_bytes = 0;     // Korthikanti et al., 16-bit: the same for all three methods
  double adapter_activation_bytes = 0;  // LoRA adds each adapter's r-wide hidden values, 2 s b r bytes
  std::vector<ModelMemory> memory;      // full, lora, qlora
};

struct LoraTheory {
  std::int64_t d = 0, k = 0, n = 0;
  int true_rank = 0;
  std::vector<int> swept_ranks;                 // 1, 2, 4, 8, 16
  std::vector<std::int64_t> trainable_by_rank;  // r (d + k) at each
  std::int64_t full_trainable = 0;              // d k
  int r = 0;                                    // QLoRA's in the run
  std::int64_t trainable_at_r = 0;
  double trainable_share_at_r = 0;   // r (d + k) / (d k)
  std::vector<MethodMemory> memory;  // full, lora at r, qlora at r
  // The frozen base, bits per parameter: fp32, NF4's code, its fp32 scale per 64 and after double quantization
  // (8 / 64 + 32 / (64 x 256)), the saving, and the exact bits of this run's d x k base as QLoRA stores it.
  double fp32_bits = 32, nf4_code_bits = 4, nf4_scale_bits = 0, nf4_double_quant_scale_bits = 0;
  double double_quant_saving_bits = 0;
  double nf4_base_bits_per_parameter = 0;
  // The course's worked numbers: d = k = 4096.
  std::int64_t course_d = 4096;
  std::int64_t course_full = 0, course_r8 = 0, course_r16 = 0;
  double course_r8_percent = 0, course_r16_percent = 0;
  CalculatorTheory calculator;
  // Inference with the adapter unmerged, timed for `inference_tokens` inputs through an `inference_width`-square
  // layer: its extra multiply-adds as a share of W x's, r (d + k) / (d k), at each swept r.
  std::int64_t inference_width = 0, inference_tokens = 0;
  std::vector<double> adapter_flop_share_by_rank;
};

// One training of the run.
struct TrainingRun {
  std::string method;
  int r = 0;
  std::int64_t trainable_parameters = 0;
  double initial_loss = 0, final_loss = 0;
  double best_rank_r_loss = 0;  // Eckart-Young's least loss at this rank (0 for full)
  double step_us = 0, step_min_us = 0, step_max_us = 0;
  MethodMemory ledger;  // the peaks the training's own ledger recorded
  bool ledger_matches_closed_form = false;
  double merge_max_abs_diff = 0, merge_share_of_bound = 0;  // adapters only
  bool merge_agrees = false;
};

// The forward pass with the adapter unmerged against the merged weight, timed in alternation on the same inputs.
struct ForwardPoint {
  int r = 0;
  double adapter_us = 0, adapter_min_us = 0, adapter_max_us = 0;
  double merged_us = 0, merged_min_us = 0, merged_max_us = 0;
  int repeats = 0;
  double overhead = 0;    // adapter / merged - 1, from the medians
  double flop_share = 0;  // r (d + k) / (d k)
  bool agrees = false;    // the two outputs within fp32 rounding (check_merged)
  // CPU runs only: h = A x and y += s B h timed alone, over the merged pass (medians): the adapter's own cost.
  std::optional<double> products_share;
};

struct LoraMeasured {
  std::vector<TrainingRun> trainings;  // full, lora at each swept r, qlora at r
  int knee_rank = 0;                   // the least swept r whose final loss is within 1.5 x the largest r's
  bool knee_at_true_rank = false;
  bool all_ledgers_match = false;
  bool all_merges_agree = false;
  double qlora_over_lora_final_loss = 0;  // at r
  std::vector<ForwardPoint> forward;      // at each swept r
  // CUDA runs only (the keys are absent from a CPU run's JSON): the inference timed on the GPU, both of its outputs
  // held against the CPU's adapter path; the worst output's difference as a share of fp32's rounding bound.
  bool forward_on_gpu = false;
  double forward_worst_share_of_bound = 0;
  bool forward_wrong = false;  // 1 when an output at some r is outside the bound
};

DLSYS_VALUES_JSON(MethodMemory, method, r, trainable_parameters, frozen_bytes, trainable_bytes, gradient_bytes,
                  optimizer_bytes, activation_bytes, workspace_bytes, total_bytes)
DLSYS_VALUES_JSON(ModelMemory, method, trainable_parameters, weight_bytes, gradient_bytes, optimizer_bytes,
                  activation_bytes, total_bytes)
DLSYS_VALUES_JSON(AdaptedMatrix, name, rows, cols, count, adapter_parameters)
DLSYS_VALUES_JSON(CalculatorTheory, model, source, targets, r, parameters, linear_parameters, adapter_parameters,
                  adapter_share, matrices, layers, hidden, heads, micro_batch, seq, base_activation_bytes,
                  adapter_activation_bytes, memory)
DLSYS_VALUES_JSON(LoraTheory, d, k, n, true_rank, swept_ranks, trainable_by_rank, full_trainable, r, trainable_at_r,
                  trainable_share_at_r, memory, fp32_bits, nf4_code_bits, nf4_scale_bits, nf4_double_quant_scale_bits,
                  double_quant_saving_bits, nf4_base_bits_per_parameter, course_d, course_full, course_r8, course_r16,
                  course_r8_percent, course_r16_percent, calculator, inference_width, inference_tokens,
                  adapter_flop_share_by_rank)
DLSYS_VALUES_JSON(TrainingRun, method, r, trainable_parameters, initial_loss, final_loss, best_rank_r_loss, step_us,
                  step_min_us, step_max_us, ledger, ledger_matches_closed_form, merge_max_abs_diff,
                  merge_share_of_bound, merge_agrees)
DLSYS_VALUES_JSON(ForwardPoint, r, adapter_us, adapter_min_us, adapter_max_us, merged_us, merged_min_us, merged_max_us,
                  repeats, overhead, flop_share, agrees, products_share)
DLSYS_VALUES_PART(LoraMeasuredKeys, LoraMeasured, trainings, knee_rank, knee_at_true_rank, all_ledgers_match,
                  all_merges_agree, qlora_over_lora_final_loss, forward)
DLSYS_VALUES_PART(LoraGpuKeys, LoraMeasured, forward_on_gpu, forward_worst_share_of_bound, forward_wrong)
inline void to_json(nlohmann::ordered_json& json, const LoraMeasured& measured) {
  write_parts<LoraMeasuredKeys, LoraGpuKeys>(json, measured, measured.forward_on_gpu);
}
inline void from_json(const nlohmann::ordered_json& json, LoraMeasured& measured) {
  read_parts<LoraMeasuredKeys, LoraGpuKeys>(json, measured);
}

}  // namespace dlsys::lora_lesson
