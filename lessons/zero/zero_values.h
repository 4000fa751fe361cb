#pragma once
// The ZeRO lesson's typed values: the calculator's closed forms at the chosen model, ranks and stage, and what one run
// of the sharded training measured. `dlsys-lab run --json` writes them under "theory" and "measured" with these field
// names as keys.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/lesson_values.h"

namespace dlsys::zero_lesson {

struct ZeroTheory {
  std::string psi_source;  // "params = 7.5e9", "preset llama-2-7b (counted)", "the lab's stack: 8 layers x 2 x 256^2"
  double parameters = 0;   // Psi
  int ranks = 0;           // N
  int stage = 0;
  int optimizer_bytes_per_parameter = 12;  // K
  // The paper's per-rank model states at the chosen stage, by kind, and their total.
  double weight_bytes_per_rank = 0, gradient_bytes_per_rank = 0, optimizer_bytes_per_rank = 0;
  double model_state_bytes_per_rank = 0;
  std::vector<double> model_state_bytes_by_stage;  // stages 0-3 at this N
  double reduction_factor = 0;                     // stage 0's over the chosen stage's, exact at this N
  double reduction_limit = 0;                      // as N grows: 1, 4, 8, N
  double comm_elements_per_step = 0;               // 2 Psi or 3 Psi (the paper's)
  double ring_comm_elements_per_step = 0;          // the ring's exact 2 (N-1)/N Psi or 3 (N-1)/N Psi
  double fp32_weight_bytes = 0;                    // 4 Psi: what "GPT-3 needs 700 GB" counts
  // Activations per rank (Korthikanti et al. 2023, 16-bit; 0 when the model's shape is not known).
  bool activations_known = false;
  std::int64_t layers = 0, hidden = 0, heads = 0, micro_batch = 0, seq = 0;
  bool checkpointing = false;
  double activation_bytes_per_rank = 0;
  std::string activation_assumption;
  // Against the chosen GPU.
  std::string gpu;
  double gpu_bytes = 0;
  double total_bytes_per_rank = 0;  // model states + activations (workspace and fragmentation not counted)
  bool fits = false;
  std::int64_t min_ranks_to_fit = 0;  // the smallest N at the chosen stage; 0 when no N does
  int min_stage_to_fit = -1;          // the smallest stage at the chosen N; -1 when none does
};

// One rank's peak bytes by tag, from its ledger.
struct PeakBytes {
  std::int64_t weights = 0, gradients = 0, optimizer = 0, activations = 0, comm = 0, workspace = 0;
  std::int64_t model_states = 0, total = 0;
};

// One stage of the run, at the chosen N.
struct StageMeasured {
  int stage = 0;
  PeakBytes peak_bytes_per_rank;        // the largest over the ranks, tag by tag
  std::vector<PeakBytes> peak_by_rank;  // each rank's
  std::int64_t model_state_bytes_formula = 0;
  bool model_states_match_formula = false;      // every rank's ledger equals the formula to the byte
  std::int64_t comm_bytes = 0;                  // sent by rank 0 in the last step, counted by the links (fp32 carrier)
  std::int64_t comm_elements = 0;               // comm_bytes / 4
  std::int64_t ring_comm_elements_formula = 0;  // k (N-1)/N Psi, k = 2 or 3
  bool comm_matches_formula = false;
  double max_rel_err_vs_stage0 = 0;  // max |w - w0| / max |w0| over the final fp32 master weights
  bool bit_identical_to_stage0 = false;
  double step_us = 0, step_us_min = 0, step_us_max = 0;  // the slowest rank's, over the steps after the first
  std::vector<double> losses;                            // per step
  int collectives_per_step = 0;                          // calls rank 0 made in the last step
};

struct ZeroMeasured {
  int stage = 0, ranks = 0;
  std::int64_t parameters = 0;
  // The chosen stage's, repeated at the top for scripts.
  PeakBytes peak_bytes_per_rank;
  std::int64_t comm_bytes = 0;
  double max_rel_err_vs_stage0 = 0;
  bool all_stages_match_formula = false;  // the benchmark: ledger == formula at every stage, every rank
  bool all_stages_bit_identical = false;
  std::string dtype;  // "bf16" or "fp16"
  // One step per stage at each N of the sweep (1, 2, 4, 8, 16 and the chosen N, where the shards are even): every
  // rank's ledger against the formula.
  std::vector<int> swept_ranks;
  bool sweep_matches_formula = false;
  std::vector<StageMeasured> stages;  // 0-3
  // On the CUDA backend: how the ranks were placed, and GPU stage 0's weights against CPU stage 0's (cuBLAS sums in
  // another order, so they agree to rounding; the stages' max_rel_err_vs_stage0 compare with GPU stage 0).
  bool on_gpu = false;
  std::string placement;
  double max_rel_err_gpu_vs_cpu_stage0 = 0;
};

void to_json(nlohmann::ordered_json& json, const StageMeasured& stage);
void from_json(const nlohmann::ordered_json& json, StageMeasured& stage);

DLSYS_VALUES_JSON(ZeroTheory, psi_source, parameters, ranks, stage, optimizer_bytes_per_parameter,
                  weight_bytes_per_rank, gradient_bytes_per_rank, optimizer_bytes_per_rank, model_state_bytes_per_rank,
                  model_state_bytes_by_stage, reduction_factor, reduction_limit, comm_elements_per_step,
                  ring_comm_elements_per_step, fp32_weight_bytes, activations_known, layers, hidden, heads, micro_batch,
                  seq, checkpointing, activation_bytes_per_rank, activation_assumption, gpu, gpu_bytes,
                  total_bytes_per_rank, fits, min_ranks_to_fit, min_stage_to_fit)
DLSYS_VALUES_JSON(PeakBytes, weights, gradients, optimizer, activations, comm, workspace, model_states, total)
DLSYS_VALUES_JSON(ZeroMeasured, stage, ranks, parameters, peak_bytes_per_rank, comm_bytes, max_rel_err_vs_stage0,
                  all_stages_match_formula, all_stages_bit_identical, dtype, swept_ranks, sweep_matches_formula, stages,
                  on_gpu, placement, max_rel_err_gpu_vs_cpu_stage0)

}  // namespace dlsys::zero_lesson
