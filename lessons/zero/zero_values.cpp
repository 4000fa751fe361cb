#include "lessons/zero/zero_values.h"

#include "engine/json_read.h"

namespace dlsys::zero_lesson {

void to_json(nlohmann::ordered_json& j, const ZeroTheory& t) {
  j["psi_source"] = t.psi_source;
  j["parameters"] = t.parameters;
  j["ranks"] = t.ranks;
  j["stage"] = t.stage;
  j["optimizer_bytes_per_parameter"] = t.optimizer_bytes_per_parameter;
  j["weight_bytes_per_rank"] = t.weight_bytes_per_rank;
  j["gradient_bytes_per_rank"] = t.gradient_bytes_per_rank;
  j["optimizer_bytes_per_rank"] = t.optimizer_bytes_per_rank;
  j["model_state_bytes_per_rank"] = t.model_state_bytes_per_rank;
  j["model_state_bytes_by_stage"] = t.model_state_bytes_by_stage;
  j["reduction_factor"] = t.reduction_factor;
  j["reduction_limit"] = t.reduction_limit;
  j["comm_elements_per_step"] = t.comm_elements_per_step;
  j["ring_comm_elements_per_step"] = t.ring_comm_elements_per_step;
  j["fp32_weight_bytes"] = t.fp32_weight_bytes;
  j["activations_known"] = t.activations_known;
  j["layers"] = t.layers;
  j["hidden"] = t.hidden;
  j["heads"] = t.heads;
  j["micro_batch"] = t.micro_batch;
  j["seq"] = t.seq;
  j["checkpointing"] = t.checkpointing;
  j["activation_bytes_per_rank"] = t.activation_bytes_per_rank;
  j["activation_assumption"] = t.activation_assumption;
  j["gpu"] = t.gpu;
  j["gpu_bytes"] = t.gpu_bytes;
  j["total_bytes_per_rank"] = t.total_bytes_per_rank;
  j["fits"] = t.fits;
  j["min_ranks_to_fit"] = t.min_ranks_to_fit;
  j["min_stage_to_fit"] = t.min_stage_to_fit;
}

void to_json(nlohmann::ordered_json& j, const PeakBytes& p) {
  j["weights"] = p.weights;
  j["gradients"] = p.gradients;
  j["optimizer"] = p.optimizer;
  j["activations"] = p.activations;
  j["comm"] = p.comm;
  j["workspace"] = p.workspace;
  j["model_states"] = p.model_states;
  j["total"] = p.total;
}

void to_json(nlohmann::ordered_json& j, const StageMeasured& s) {
  j["stage"] = s.stage;
  j["peak_bytes_per_rank"] = s.peak_bytes_per_rank;
  bool ranks_equal = true;  // each rank's own bytes stay in the struct (the view's table); JSON says whether they agree
  for (const PeakBytes& p : s.peak_by_rank)
    ranks_equal &= p.model_states == s.peak_bytes_per_rank.model_states && p.total == s.peak_bytes_per_rank.total;
  j["ranks_hold_equal_bytes"] = ranks_equal;
  j["model_state_bytes_formula"] = s.model_state_bytes_formula;
  j["model_states_match_formula"] = s.model_states_match_formula;
  j["comm_bytes"] = s.comm_bytes;
  j["comm_elements"] = s.comm_elements;
  j["ring_comm_elements_formula"] = s.ring_comm_elements_formula;
  j["comm_matches_formula"] = s.comm_matches_formula;
  j["max_rel_err_vs_stage0"] = s.max_rel_err_vs_stage0;
  j["bit_identical_to_stage0"] = s.bit_identical_to_stage0;
  j["step_us"] = s.step_us;
  j["step_us_min"] = s.step_us_min;
  j["step_us_max"] = s.step_us_max;
  j["losses"] = s.losses;
  j["collectives_per_step"] = s.collectives_per_step;
  j["peak_by_rank"] = s.peak_by_rank;  // after the documented keys: what a recorded run's table shows per rank
}

void to_json(nlohmann::ordered_json& j, const ZeroMeasured& m) {
  j["stage"] = m.stage;
  j["ranks"] = m.ranks;
  j["parameters"] = m.parameters;
  j["peak_bytes_per_rank"] = m.peak_bytes_per_rank;
  j["comm_bytes"] = m.comm_bytes;
  j["max_rel_err_vs_stage0"] = m.max_rel_err_vs_stage0;
  j["all_stages_match_formula"] = m.all_stages_match_formula;
  j["all_stages_bit_identical"] = m.all_stages_bit_identical;
  j["dtype"] = m.dtype;
  j["swept_ranks"] = m.swept_ranks;
  j["sweep_matches_formula"] = m.sweep_matches_formula;
  j["stages"] = m.stages;
  j["on_gpu"] = m.on_gpu;
  j["placement"] = m.placement;
  j["max_rel_err_gpu_vs_cpu_stage0"] = m.max_rel_err_gpu_vs_cpu_stage0;
}

void from_json(const nlohmann::ordered_json& j, ZeroTheory& t) {
  read_key(j, "psi_source", t.psi_source);
  read_key(j, "parameters", t.parameters);
  read_key(j, "ranks", t.ranks);
  read_key(j, "stage", t.stage);
  read_key(j, "optimizer_bytes_per_parameter", t.optimizer_bytes_per_parameter);
  read_key(j, "weight_bytes_per_rank", t.weight_bytes_per_rank);
  read_key(j, "gradient_bytes_per_rank", t.gradient_bytes_per_rank);
  read_key(j, "optimizer_bytes_per_rank", t.optimizer_bytes_per_rank);
  read_key(j, "model_state_bytes_per_rank", t.model_state_bytes_per_rank);
  read_key(j, "model_state_bytes_by_stage", t.model_state_bytes_by_stage);
  read_key(j, "reduction_factor", t.reduction_factor);
  read_key(j, "reduction_limit", t.reduction_limit);
  read_key(j, "comm_elements_per_step", t.comm_elements_per_step);
  read_key(j, "ring_comm_elements_per_step", t.ring_comm_elements_per_step);
  read_key(j, "fp32_weight_bytes", t.fp32_weight_bytes);
  read_key(j, "activations_known", t.activations_known);
  read_key(j, "layers", t.layers);
  read_key(j, "hidden", t.hidden);
  read_key(j, "heads", t.heads);
  read_key(j, "micro_batch", t.micro_batch);
  read_key(j, "seq", t.seq);
  read_key(j, "checkpointing", t.checkpointing);
  read_key(j, "activation_bytes_per_rank", t.activation_bytes_per_rank);
  read_key(j, "activation_assumption", t.activation_assumption);
  read_key(j, "gpu", t.gpu);
  read_key(j, "gpu_bytes", t.gpu_bytes);
  read_key(j, "total_bytes_per_rank", t.total_bytes_per_rank);
  read_key(j, "fits", t.fits);
  read_key(j, "min_ranks_to_fit", t.min_ranks_to_fit);
  read_key(j, "min_stage_to_fit", t.min_stage_to_fit);
}

void from_json(const nlohmann::ordered_json& j, PeakBytes& p) {
  read_key(j, "weights", p.weights);
  read_key(j, "gradients", p.gradients);
  read_key(j, "optimizer", p.optimizer);
  read_key(j, "activations", p.activations);
  read_key(j, "comm", p.comm);
  read_key(j, "workspace", p.workspace);
  read_key(j, "model_states", p.model_states);
  read_key(j, "total", p.total);
}

void from_json(const nlohmann::ordered_json& j, StageMeasured& s) {
  read_key(j, "stage", s.stage);
  read_key(j, "peak_bytes_per_rank", s.peak_bytes_per_rank);
  read_key(j, "peak_by_rank", s.peak_by_rank);  // ranks_hold_equal_bytes follows from it
  read_key(j, "model_state_bytes_formula", s.model_state_bytes_formula);
  read_key(j, "model_states_match_formula", s.model_states_match_formula);
  read_key(j, "comm_bytes", s.comm_bytes);
  read_key(j, "comm_elements", s.comm_elements);
  read_key(j, "ring_comm_elements_formula", s.ring_comm_elements_formula);
  read_key(j, "comm_matches_formula", s.comm_matches_formula);
  read_key(j, "max_rel_err_vs_stage0", s.max_rel_err_vs_stage0);
  read_key(j, "bit_identical_to_stage0", s.bit_identical_to_stage0);
  read_key(j, "step_us", s.step_us);
  read_key(j, "step_us_min", s.step_us_min);
  read_key(j, "step_us_max", s.step_us_max);
  read_key(j, "losses", s.losses);
  read_key(j, "collectives_per_step", s.collectives_per_step);
}

void from_json(const nlohmann::ordered_json& j, ZeroMeasured& m) {
  read_key(j, "stage", m.stage);
  read_key(j, "ranks", m.ranks);
  read_key(j, "parameters", m.parameters);
  read_key(j, "peak_bytes_per_rank", m.peak_bytes_per_rank);
  read_key(j, "comm_bytes", m.comm_bytes);
  read_key(j, "max_rel_err_vs_stage0", m.max_rel_err_vs_stage0);
  read_key(j, "all_stages_match_formula", m.all_stages_match_formula);
  read_key(j, "all_stages_bit_identical", m.all_stages_bit_identical);
  read_key(j, "dtype", m.dtype);
  read_key(j, "swept_ranks", m.swept_ranks);
  read_key(j, "sweep_matches_formula", m.sweep_matches_formula);
  read_key(j, "stages", m.stages);
  read_key(j, "on_gpu", m.on_gpu);
  read_key(j, "placement", m.placement);
  read_key(j, "max_rel_err_gpu_vs_cpu_stage0", m.max_rel_err_gpu_vs_cpu_stage0);
}

}  // namespace dlsys::zero_lesson
