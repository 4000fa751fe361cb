#include "lessons/tensor/tensor_values.h"

#include "engine/json_read.h"

namespace dlsys::tensor {

void to_json(nlohmann::ordered_json& j, const TensorTheory& t) {
  j["allreduces_per_layer_fwd"] = t.allreduces_per_layer_fwd;
  j["allreduces_per_layer_bwd"] = t.allreduces_per_layer_bwd;
  j["reduce_scatters_per_layer_fwd"] = t.reduce_scatters_per_layer_fwd;
  j["all_gathers_per_layer_fwd"] = t.all_gathers_per_layer_fwd;
  j["reduce_scatters_per_layer_bwd"] = t.reduce_scatters_per_layer_bwd;
  j["all_gathers_per_layer_bwd"] = t.all_gathers_per_layer_bwd;
  j["comm_elements_per_allreduce"] = t.comm_elements_per_allreduce;
  j["comm_bytes_per_allreduce_per_rank"] = t.comm_bytes_per_allreduce_per_rank;
  j["comm_bytes_per_step_per_rank"] = t.comm_bytes_per_step_per_rank;
  j["activation_bytes_per_layer"] = t.activation_bytes_per_layer;
  j["activation_formula"] = t.activation_formula;
  j["activation_seq"] = t.activation_seq;
  j["activation_batch"] = t.activation_batch;
  j["activation_hidden"] = t.activation_hidden;
  j["activation_heads"] = t.activation_heads;
  j["activation_t"] = t.activation_t;
  j["activation_sp"] = t.activation_sp;
  j["activation_bytes_per_value"] = t.activation_bytes_per_value;
  j["activation_bytes_no_parallel"] = t.activation_bytes_no_parallel;
  j["activation_bytes_tensor"] = t.activation_bytes_tensor;
  j["activation_bytes_tensor_sequence"] = t.activation_bytes_tensor_sequence;
  j["lab_activation_bytes_per_rank"] = t.lab_activation_bytes_per_rank;
  j["lab_activation_formula"] = t.lab_activation_formula;
  j["params_per_rank"] = t.params_per_rank;
  j["flops_per_step_per_rank"] = t.flops_per_step_per_rank;
}

namespace {

nlohmann::ordered_json example_json(const CourseExample& e) {
  nlohmann::ordered_json j;
  j["y"] = e.y;
  j["partials"] = e.partials;
  j["halves"] = e.halves;
  j["y_row_split"] = e.y_row_split;
  j["ranks_agree"] = e.ranks_agree;
  return j;
}

}  // namespace

void to_json(nlohmann::ordered_json& j, const TensorMeasured& m) {
  if (m.example) {
    j = example_json(*m.example);
    return;
  }
  j["placement"] = m.placement;
  j["on_gpu"] = m.on_gpu;
  j["compute_us"] = m.compute_us;
  j["compute_us_min"] = m.compute_us_min;
  j["compute_us_max"] = m.compute_us_max;
  j["comm_us"] = m.comm_us;
  j["comm_us_min"] = m.comm_us_min;
  j["comm_us_max"] = m.comm_us_max;
  j["step_us"] = m.step_us;
  j["step_us_min"] = m.step_us_min;
  j["step_us_max"] = m.step_us_max;
  j["compute_cpu_us"] = m.compute_cpu_us;
  j["comm_bytes"] = m.comm_bytes;
  j["comm_bytes_match_formula"] = m.comm_bytes_match_formula;
  j["max_rel_err"] = m.max_rel_err;
  for (const MeasuredError& e : m.errors) j["max_rel_err_" + e.key] = e.max_rel_err;
  j["activation_bytes_measured"] = m.activation_bytes_measured;
  j["activation_bytes_match_formula"] = m.activation_bytes_match_formula;
  nlohmann::ordered_json calls = nlohmann::ordered_json::array();
  for (const MeasuredCollective& c : m.collectives)
    calls.push_back({{"op", c.op},
                     {"site", c.site},
                     {"pass", c.pass},
                     {"elements", c.elements},
                     {"bytes_sent", c.bytes_sent},
                     {"bytes_formula", c.bytes_formula},
                     {"time_us", c.time_us}});
  j["collectives"] = std::move(calls);
  j["timed_steps"] = m.timed_steps;
  j["compute_ratio_t2_over_t1"] = m.compute_ratio_t2_over_t1;
  j["compute_cpu_ratio_t2_over_t1"] = m.compute_cpu_ratio_t2_over_t1;
  j["compute_ratio_bar"] = m.compute_ratio_bar;
  j["meets_compute_bar"] = m.meets_compute_bar;
  j["at_bar_sizes"] = m.at_bar_sizes;
  j["max_rel_err_bar"] = m.max_rel_err_bar;
  j["meets_error_bar"] = m.meets_error_bar;
  // Each tensor's name beside its key, after the documented keys, so a recorded run labels its rows the same way.
  auto errors = nlohmann::ordered_json::array();
  for (const MeasuredError& e : m.errors)
    errors.push_back({{"key", e.key}, {"tensor", e.tensor}, {"max_rel_err", e.max_rel_err}});
  j["errors"] = std::move(errors);
  if (m.gpu_scaling_caveat) j["gpu_scaling_caveat"] = *m.gpu_scaling_caveat;
}

void from_json(const nlohmann::ordered_json& j, TensorTheory& t) {
  read_key(j, "allreduces_per_layer_fwd", t.allreduces_per_layer_fwd);
  read_key(j, "allreduces_per_layer_bwd", t.allreduces_per_layer_bwd);
  read_key(j, "reduce_scatters_per_layer_fwd", t.reduce_scatters_per_layer_fwd);
  read_key(j, "all_gathers_per_layer_fwd", t.all_gathers_per_layer_fwd);
  read_key(j, "reduce_scatters_per_layer_bwd", t.reduce_scatters_per_layer_bwd);
  read_key(j, "all_gathers_per_layer_bwd", t.all_gathers_per_layer_bwd);
  read_key(j, "comm_elements_per_allreduce", t.comm_elements_per_allreduce);
  read_key(j, "comm_bytes_per_allreduce_per_rank", t.comm_bytes_per_allreduce_per_rank);
  read_key(j, "comm_bytes_per_step_per_rank", t.comm_bytes_per_step_per_rank);
  read_key(j, "activation_bytes_per_layer", t.activation_bytes_per_layer);
  read_key(j, "activation_formula", t.activation_formula);
  read_key(j, "activation_seq", t.activation_seq);
  read_key(j, "activation_batch", t.activation_batch);
  read_key(j, "activation_hidden", t.activation_hidden);
  read_key(j, "activation_heads", t.activation_heads);
  read_key(j, "activation_t", t.activation_t);
  read_key(j, "activation_sp", t.activation_sp);
  read_key(j, "activation_bytes_per_value", t.activation_bytes_per_value);
  read_key(j, "activation_bytes_no_parallel", t.activation_bytes_no_parallel);
  read_key(j, "activation_bytes_tensor", t.activation_bytes_tensor);
  read_key(j, "activation_bytes_tensor_sequence", t.activation_bytes_tensor_sequence);
  read_key(j, "lab_activation_bytes_per_rank", t.lab_activation_bytes_per_rank);
  read_key(j, "lab_activation_formula", t.lab_activation_formula);
  read_key(j, "params_per_rank", t.params_per_rank);
  read_key(j, "flops_per_step_per_rank", t.flops_per_step_per_rank);
}

void from_json(const nlohmann::ordered_json& j, MeasuredError& e) {
  read_key(j, "key", e.key);
  read_key(j, "tensor", e.tensor);
  read_key(j, "max_rel_err", e.max_rel_err);
}

void from_json(const nlohmann::ordered_json& j, MeasuredCollective& c) {
  read_key(j, "op", c.op);
  read_key(j, "site", c.site);
  read_key(j, "pass", c.pass);
  read_key(j, "elements", c.elements);
  read_key(j, "bytes_sent", c.bytes_sent);
  read_key(j, "bytes_formula", c.bytes_formula);
  read_key(j, "time_us", c.time_us);
}

void from_json(const nlohmann::ordered_json& j, TensorMeasured& m) {
  m = TensorMeasured{};
  if (j.is_object() && j.contains("y")) {
    CourseExample e;
    read_key(j, "y", e.y);
    read_key(j, "partials", e.partials);
    read_key(j, "halves", e.halves);
    read_key(j, "y_row_split", e.y_row_split);
    read_key(j, "ranks_agree", e.ranks_agree);
    m.example = std::move(e);
    return;
  }
  read_key(j, "placement", m.placement);
  read_key(j, "on_gpu", m.on_gpu);
  read_key(j, "compute_us", m.compute_us);
  read_key(j, "compute_us_min", m.compute_us_min);
  read_key(j, "compute_us_max", m.compute_us_max);
  read_key(j, "comm_us", m.comm_us);
  read_key(j, "comm_us_min", m.comm_us_min);
  read_key(j, "comm_us_max", m.comm_us_max);
  read_key(j, "step_us", m.step_us);
  read_key(j, "step_us_min", m.step_us_min);
  read_key(j, "step_us_max", m.step_us_max);
  read_key(j, "compute_cpu_us", m.compute_cpu_us);
  read_key(j, "comm_bytes", m.comm_bytes);
  read_key(j, "comm_bytes_match_formula", m.comm_bytes_match_formula);
  read_key(j, "max_rel_err", m.max_rel_err);
  read_key(j, "errors", m.errors);
  read_key(j, "activation_bytes_measured", m.activation_bytes_measured);
  read_key(j, "activation_bytes_match_formula", m.activation_bytes_match_formula);
  read_key(j, "collectives", m.collectives);
  read_key(j, "timed_steps", m.timed_steps);
  read_key(j, "compute_ratio_t2_over_t1", m.compute_ratio_t2_over_t1);
  read_key(j, "compute_cpu_ratio_t2_over_t1", m.compute_cpu_ratio_t2_over_t1);
  read_key(j, "compute_ratio_bar", m.compute_ratio_bar);
  read_key(j, "meets_compute_bar", m.meets_compute_bar);
  read_key(j, "at_bar_sizes", m.at_bar_sizes);
  read_key(j, "max_rel_err_bar", m.max_rel_err_bar);
  read_key(j, "meets_error_bar", m.meets_error_bar);
  read_key_if_present(j, "gpu_scaling_caveat", m.gpu_scaling_caveat);  // absent from runs recorded before it
}

}  // namespace dlsys::tensor
