#pragma once
// The tensor-parallelism lesson's typed values: the closed forms at the chosen shape, and what one run measured (the
// layer on t rank threads, or the course's 4x4 example). `dlsys-lab run --json` writes them under "theory" and
// "measured" with these field names as keys.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/lesson_values.h"

namespace dlsys::tensor {

struct TensorTheory {
  // Megatron-LM's collectives per transformer layer (attention block + MLP block), each over b s h elements.
  int allreduces_per_layer_fwd = 0;  // 2 without sequence parallelism, 0 with it
  int allreduces_per_layer_bwd = 0;
  int reduce_scatters_per_layer_fwd = 0, all_gathers_per_layer_fwd = 0;  // sequence parallelism: 2 and 2
  int reduce_scatters_per_layer_bwd = 0, all_gathers_per_layer_bwd = 0;  // 2 and 2, plus 2 all-gathers of saved inputs
  std::int64_t comm_elements_per_allreduce = 0;                          // b s h
  double comm_bytes_per_allreduce_per_rank = 0;                          // ring, fp32: 2 (t-1)/t x 4 b s h
  double comm_bytes_per_step_per_rank = 0;  // every collective of one forward + backward of the lab's layer
  // Korthikanti et al. (MLSys 2023), 16-bit activations, per rank and layer, at the chosen t and sp, and its inputs.
  std::int64_t activation_bytes_per_layer = 0;
  std::string activation_formula;
  std::int64_t activation_seq = 0, activation_batch = 0, activation_hidden = 0, activation_heads = 0;
  int activation_t = 0;
  bool activation_sp = false;
  int activation_bytes_per_value = 2;
  std::int64_t activation_bytes_no_parallel = 0;      // s b h (34 + 5 a s / h)
  std::int64_t activation_bytes_tensor = 0;           // s b h (10 + 24/t + 5 a s / (h t))
  std::int64_t activation_bytes_tensor_sequence = 0;  // s b h (34/t + 5 a s / (h t))
  // The lab's fp32 layer (the same tensors, 4-byte values, 1-byte masks): what the ledger must count per rank.
  std::int64_t lab_activation_bytes_per_rank = 0;
  std::string lab_activation_formula;
  std::int64_t params_per_rank = 0;    // 12 h^2 / t + 4 h
  double flops_per_step_per_rank = 0;  // GEMMs of one forward + backward: (72 s b h^2 + 12 s^2 b h) / t
};

// One collective of the chosen run, as rank 0 made it.
struct MeasuredCollective {
  std::string op, site, pass;  // "allreduce", "attention output (g)", "forward"
  std::int64_t elements = 0;
  std::int64_t bytes_sent = 0;  // counted by the links
  double bytes_formula = 0;     // 2 (t-1)/t or (t-1)/t x elements x 4
  double time_us = 0;           // median over the timed steps
};

struct MeasuredError {
  std::string key;     // "output", "dw_qkv", ...: the JSON key is max_rel_err_<key>
  std::string tensor;  // "output", "dW_qkv", ...
  double max_rel_err = 0;
};

// The course's 4x4 example (example = course): y gathered on each rank, and the two partial sums of the row split.
struct CourseExample {
  std::vector<float> y;                      // the column split's all-gathered output (rank 0's)
  std::vector<std::vector<float>> halves;    // each rank's slice of y before the all-gather
  std::vector<std::vector<float>> partials;  // each rank's partial y in the row split
  std::vector<float> y_row_split;            // the all-reduced sum (rank 0's)
  bool ranks_agree = false;                  // every rank ends with the same y, both ways
};

struct TensorMeasured {
  std::optional<CourseExample> example;  // set, and nothing else, when example = course
  // Where the ranks ran: CPU threads, one GPU each, or streams emulating ranks on one GPU (and by which collectives).
  std::string placement;
  bool on_gpu = false;
  // The chosen t and sp; per-rank times are the slowest rank's per step, median (and min, max) over the timed steps.
  double compute_us = 0, compute_us_min = 0, compute_us_max = 0;
  double comm_us = 0, comm_us_min = 0, comm_us_max = 0;
  double step_us = 0, step_us_min = 0, step_us_max = 0;
  double compute_cpu_us = 0;    // the same compute in thread CPU time: the work, without waiting for a core (CPU only)
  std::int64_t comm_bytes = 0;  // sent by rank 0 in one forward + backward, counted by the links
  bool comm_bytes_match_formula = false;
  double max_rel_err = 0;                      // the worst tensor's
  std::vector<MeasuredError> errors;           // max |sharded - unsharded| / max |unsharded|, per tensor
  std::int64_t activation_bytes_measured = 0;  // the ledger's "activations" of rank 0 (every rank the same)
  bool activation_bytes_match_formula = false;
  std::vector<MeasuredCollective> collectives;
  int timed_steps = 0;
  // What the lesson expects: per-rank compute at t = 2 at most 0.6 of t = 1's (same run, fastest steps), and the error
  // at most 1e-4.
  double compute_ratio_t2_over_t1 = 0;      // 0 when t = 1 or t = 2 was not measured (heads not divisible)
  double compute_cpu_ratio_t2_over_t1 = 0;  // the same in thread CPU time: what the split did to the work itself
  double compute_ratio_bar = 0.6;
  bool meets_compute_bar = false;
  bool at_bar_sizes = false;  // hidden 2048, seq 512, t 2: the sizes the expectation is stated for
  double max_rel_err_bar = 1e-4;
  bool meets_error_bar = false;
  // On a GPU, when splitting did not cut per-rank compute: why, in one sentence the scaling step shows.
  std::optional<std::string> gpu_scaling_caveat;
};

DLSYS_VALUES_JSON(TensorTheory, allreduces_per_layer_fwd, allreduces_per_layer_bwd, reduce_scatters_per_layer_fwd,
                  all_gathers_per_layer_fwd, reduce_scatters_per_layer_bwd, all_gathers_per_layer_bwd,
                  comm_elements_per_allreduce, comm_bytes_per_allreduce_per_rank, comm_bytes_per_step_per_rank,
                  activation_bytes_per_layer, activation_formula, activation_seq, activation_batch, activation_hidden,
                  activation_heads, activation_t, activation_sp, activation_bytes_per_value,
                  activation_bytes_no_parallel, activation_bytes_tensor, activation_bytes_tensor_sequence,
                  lab_activation_bytes_per_rank, lab_activation_formula, params_per_rank, flops_per_step_per_rank)
DLSYS_VALUES_JSON(MeasuredCollective, op, site, pass, elements, bytes_sent, bytes_formula, time_us)
DLSYS_VALUES_JSON(MeasuredError, key, tensor, max_rel_err)
DLSYS_VALUES_JSON(CourseExample, y, partials, halves, y_row_split, ranks_agree)
void to_json(nlohmann::ordered_json& json, const TensorMeasured& measured);
void from_json(const nlohmann::ordered_json& json, TensorMeasured& measured);

}  // namespace dlsys::tensor
