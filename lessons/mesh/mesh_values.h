#pragma once
// The mesh lesson's closed forms and measurements, declared once (engine/lesson_values.h).
#include <cstdint>
#include <string>
#include <vector>

#include "engine/lesson_values.h"

namespace dlsys::mesh_lesson {

// One rank's closed forms, per optimizer step (bytes sent) and at the peak (memory), fp32.
struct RankTheory {
  int rank = 0, d = 0, t = 0, p = 0;
  int tp_all_reduces = 0;             // 2 per layer of the stage per micro-batch
  std::int64_t tp_bytes = 0;          // tp_all_reduces x 2 (tp - 1) / tp x rows h 4
  int dp_buckets = 0;                 // one a layer of the stage
  std::int64_t dp_bytes = 0;          // 2 (dp - 1) / dp x the gradient shard's bytes
  int pp_messages = 0;                // m forward to p + 1, m backward to p - 1
  std::int64_t pp_bytes = 0;          // pp_messages x rows h 4
  std::int64_t weight_bytes = 0;      // (L / pp) 2 h (4h / tp) 4
  std::int64_t gradient_bytes = 0;    // as many
  int in_flight = 0;                  // micro-batches stashed at once: min(pp - p, m) (1F1B)
  std::int64_t stash_bytes = 0;       // one micro-batch: rows ((L / pp)(h + 4h / tp) + h on the last stage) 4
  std::int64_t activation_bytes = 0;  // in_flight x stash_bytes
  std::int64_t scratch_bytes = 0;     // rows (2h + 4h / tp) 4
  std::int64_t total_bytes = 0;       // weights + gradients + activations + scratch
};

// The planner's answer for the parameters' model and cluster (the whole result is in the step data).
struct PlannerTheory {
  std::string model;
  double parameters = 0;
  int gpus = 0, gpus_per_node = 0;
  std::int64_t global_batch = 0, seq = 0;
  int plans = 0;     // every (dp, tp, pp, order, ZeRO stage, m, checkpointing) costed
  int fitting = 0;   // of them, those that fit the GPU's memory (and keep tp inside a node)
  std::string best;  // the fastest that fits, or "" when none does
  double best_step_s = 0, best_memory_bytes = 0, best_tokens_per_s = 0;
  std::vector<std::string> rules;  // each rule of thumb and its verdict
};

struct MeshTheory {
  int dp = 0, tp = 0, pp = 0, ranks = 0;
  int layers = 0, hidden = 0, expansion = 0, batch = 0, micro_batches = 0, steps = 0;
  int layers_per_stage = 0, rows_per_micro_batch = 0, inner_per_rank = 0;
  std::int64_t activation_bytes = 0;  // one (rows, h) activation or gradient: what a tp all-reduce and a message carry
  std::int64_t shard_gradient_bytes = 0;  // a rank's gradient shard: what its dp group all-reduces
  double tp_ring_factor = 0;              // 2 (tp - 1) / tp
  double dp_ring_factor = 0;              // 2 (dp - 1) / dp
  // Per step, each group's ranks together (every group of a kind is alike), and every message between stages.
  std::int64_t tp_group_bytes = 0, dp_group_bytes = 0, pp_bytes = 0;
  double bubble_fraction = 0;   // (pp - 1) / (m + pp - 1): 1F1B's idle share of a stage
  double update_tolerance = 0;  // the check: max |dW_mesh - dW_one| / max |dW_one| below this
  std::vector<RankTheory> rank_costs;
  PlannerTheory planner;
  double seven_b_zero1_bytes = 0;  // the planner's model states for 7B, 16 B a parameter, t = p = d = 2, ZeRO-1
};

// The planner's prediction for the run's own mesh, per rank and step (its busiest rank where ranks differ), on this
// machine's rank threads (lessons/mesh/mesh_planner.h).
struct RunPrediction {
  double tp_bytes = 0, pp_bytes = 0, dp_bytes = 0, weight_bytes = 0, gradient_bytes = 0;
  double bubble = 0;
  double compute_us = 0, exposed_comm_us = 0, step_us = 0;
  int hardware_threads = 0;
  // The planner's inputs, measured on the run's ranks before its first step (mesh::MeshCostProbe; absent from runs
  // recorded before the probe): the probe's means, the rate per rank they give and the link fitted to them.
  double probe_forward_us = 0, probe_backward_us = 0, probe_tp_all_reduce_us = 0, probe_dp_all_reduce_us = 0;
  double rank_gflops = 0;                        // one rank's: a layer's forward and backward FLOP over their time
  double link_alpha_us = 0, link_beta_gbps = 0;  // fitted to the probed all-reduces
  bool link_probed = false;                      // false: beta kRankLink's (with no group to probe, alpha too)
};

// What one rank measured in the last step and held over the run.
struct RankMeasured {
  int rank = 0, d = 0, t = 0, p = 0;
  int tp_all_reduces = 0, dp_buckets = 0, pp_messages = 0;
  std::int64_t tp_bytes = 0, dp_bytes = 0, pp_bytes = 0;  // the links' counts (tp, dp) and the messages' (pp)
  double compute_us = 0, tp_us = 0, dp_us = 0, step_us = 0;
  std::int64_t weight_bytes = 0, gradient_bytes = 0, peak_activation_bytes = 0, scratch_bytes = 0;
  std::int64_t peak_message_bytes = 0;  // sent and not yet taken: depends on timing, no closed form
  std::int64_t total_bytes = 0;         // weights + gradients + activations + scratch, as the formula counts
};

struct MeshMeasured {
  SpreadUnitLast step;                           // a step's makespan: median, fastest, slowest
  std::vector<double> losses, reference_losses;  // per step: the mesh's and one device's
  double update_max_rel_err = 0;  // max |dW_mesh - dW_one| / max |dW_one| over every weight, dW = change from start
  double loss_max_rel_err = 0;
  bool within_tolerance = false;    // update_max_rel_err < theory.update_tolerance
  bool replicas_identical = false;  // every dp replica's shards equal bit for bit at the end
  bool bytes_match = false;         // every rank's tp, dp and pp bytes equal to the closed forms
  bool memory_match = false;        // every rank's ledger equal to the formula (weights, gradients, activations,
                                    // scratch)
  std::int64_t tp_group_bytes = 0, dp_group_bytes = 0, pp_bytes = 0;  // the last step, tp and dp group 0's
  double comm_share = 0;  // time in tp and dp all-reduces over all ranks' step time, the last step
  std::vector<RankMeasured> rank_runs;
  // Beside the planner's prediction: the busiest rank's bytes (pp: a middle stage sends both ways) and the largest
  // shard, as the planner counts per GPU.
  std::int64_t busiest_tp_bytes = 0, busiest_pp_bytes = 0, busiest_dp_bytes = 0, largest_weight_bytes = 0;
  RunPrediction prediction;
  double step_over_prediction = 0;  // step_us / prediction.step_us
  // GPU runs only (the keys are absent from a CPU run's JSON): every rank's block products on cuBLAS, and the bytes
  // allocated for them over the GPUs (the shards and operand buffers; cuBLAS's workspaces not counted). The check is
  // the same: update_max_rel_err against one device's training on the CPU, below update_tolerance.
  bool gemms_on_gpu = false;
  double gpu_bytes = 0;
  int gpus = 0;  // 1: every rank on GPU 0 (emulated); else a GPU per rank. Absent from runs recorded before: 1.
};

DLSYS_VALUES_JSON(RankTheory, rank, d, t, p, tp_all_reduces, tp_bytes, dp_buckets, dp_bytes, pp_messages, pp_bytes,
                  weight_bytes, gradient_bytes, in_flight, stash_bytes, activation_bytes, scratch_bytes, total_bytes)
DLSYS_VALUES_JSON(PlannerTheory, model, parameters, gpus, gpus_per_node, global_batch, seq, plans, fitting, best,
                  best_step_s, best_memory_bytes, best_tokens_per_s, rules)
DLSYS_VALUES_JSON(MeshTheory, dp, tp, pp, ranks, layers, hidden, expansion, batch, micro_batches, steps,
                  layers_per_stage, rows_per_micro_batch, inner_per_rank, activation_bytes, shard_gradient_bytes,
                  tp_ring_factor, dp_ring_factor, tp_group_bytes, dp_group_bytes, pp_bytes, bubble_fraction,
                  update_tolerance, rank_costs, planner, seven_b_zero1_bytes)
// Written with the probe's keys where it ran (mesh_values.cpp).
void to_json(nlohmann::ordered_json& json, const RunPrediction& prediction);
void from_json(const nlohmann::ordered_json& json, RunPrediction& prediction);
DLSYS_VALUES_JSON(RankMeasured, rank, d, t, p, tp_all_reduces, dp_buckets, pp_messages, tp_bytes, dp_bytes, pp_bytes,
                  compute_us, tp_us, dp_us, step_us, weight_bytes, gradient_bytes, peak_activation_bytes, scratch_bytes,
                  peak_message_bytes, total_bytes)
// Written flat, the GPU's keys only in GPU runs (mesh_values.cpp).
void to_json(nlohmann::ordered_json& json, const MeshMeasured& measured);
void from_json(const nlohmann::ordered_json& json, MeshMeasured& measured);

}  // namespace dlsys::mesh_lesson
