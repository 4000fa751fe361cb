#include "lessons/fusion/fusion_values.h"

#include "engine/json_read.h"

namespace dlsys::fusion {

void to_json(nlohmann::ordered_json& j, const FusionTheory& t) {
  j["rows"] = t.rows;
  j["cols"] = t.cols;
  j["bias"] = t.bias;
  j["bytes_unfused"] = t.bytes_unfused;
  j["bytes_fused"] = t.bytes_fused;
  j["byte_ratio"] = t.byte_ratio;
  j["launches_unfused"] = t.launches_unfused;
  j["launches_fused"] = t.launches_fused;
  j["memory_ops_unfused"] = t.memory_ops_unfused;
  j["memory_ops_fused"] = t.memory_ops_fused;
  j["byte_ratio_broadcast"] = t.byte_ratio_broadcast;
  j["byte_ratio_full"] = t.byte_ratio_full;
  j["cos_accesses_unfused"] = t.cos_accesses_unfused;
  j["cos_accesses_fused"] = t.cos_accesses_fused;
  j["chain_lengths"] = t.chain_lengths;
  j["chain_bytes_per_element_unfused"] = t.chain_bytes_per_element_unfused;
  j["chain_bytes_per_element_fused"] = t.chain_bytes_per_element_fused;
  j["small_bytes"] = t.small_bytes;
}

namespace {
// Fusion's times are spelt "cos_us", "cos_us_min", "cos_us_max".
void put(nlohmann::ordered_json& j, const std::string& key, const Timing& t) {
  write_spread(j, key, t, SpreadKeys::UnitFirst);
}
void get(const nlohmann::ordered_json& j, const std::string& key, Timing& t) {
  read_spread(j, key, t, SpreadKeys::UnitFirst);
}
}  // namespace

void to_json(nlohmann::ordered_json& j, const FusionMeasured& m) {
  j = nlohmann::ordered_json::object();
  j["unfused_us"] = m.unfused_us;
  j["fused_us"] = m.fused_us;
  j["speedup"] = m.speedup;
  j["effective_gbps"] = m.effective_gbps;
  j["max_abs_err"] = m.max_abs_err;
  j["unfused_us_min"] = m.unfused.min_us;
  j["unfused_us_max"] = m.unfused.max_us;
  j["fused_us_min"] = m.fused.min_us;
  j["fused_us_max"] = m.fused.max_us;
  j["speedup_broadcast"] = m.speedup_broadcast;
  j["speedup_full"] = m.speedup_full;
  j["stream_copy_gbps"] = m.stream_copy_gbps;
  j["effective_fraction_of_stream"] = m.effective_fraction_of_stream;
  put(j, "cos", m.cos);
  put(j, "cos_cos_unfused", m.cos_cos_unfused);
  put(j, "cos_cos_fused", m.cos_cos_fused);
  put(j, "relu", m.relu);
  put(j, "gelu", m.gelu);
  j["cos_cos_speedup"] = m.cos_cos_speedup;
  j["cos_cos_over_cos"] = m.cos_cos_over_cos;
  j["gelu_over_relu"] = m.gelu_over_relu;
  put(j, "small_unfused", m.small_unfused);
  put(j, "small_fused", m.small_fused);
  put(j, "dispatch", m.dispatch);
  j["dispatch_what"] = m.dispatch_what;
  j["small_speedup"] = m.small_speedup;
  j["error_tolerance"] = m.error_tolerance;
  j["wrong"] = m.wrong;
  j["speedup_bar_met"] = m.speedup_bar_met ? 1 : 0;
  // Written after the documented keys so a recorded run can be drawn again: each bias's times, and the chains'.
  put(j, "unfused_broadcast", m.unfused_broadcast);
  put(j, "fused_broadcast", m.fused_broadcast);
  put(j, "unfused_full", m.unfused_full);
  put(j, "fused_full", m.fused_full);
  auto chains = nlohmann::ordered_json::array();
  for (const ChainMeasure& c : m.chains) {
    nlohmann::ordered_json row;
    row["length"] = c.length;
    put(row, "unfused", c.unfused);
    put(row, "fused", c.fused);
    chains.push_back(std::move(row));
  }
  j["chains"] = std::move(chains);
}

void from_json(const nlohmann::ordered_json& j, FusionTheory& t) {
  read_key(j, "rows", t.rows);
  read_key(j, "cols", t.cols);
  read_key(j, "bias", t.bias);
  read_key(j, "bytes_unfused", t.bytes_unfused);
  read_key(j, "bytes_fused", t.bytes_fused);
  read_key(j, "byte_ratio", t.byte_ratio);
  read_key(j, "launches_unfused", t.launches_unfused);
  read_key(j, "launches_fused", t.launches_fused);
  read_key(j, "memory_ops_unfused", t.memory_ops_unfused);
  read_key(j, "memory_ops_fused", t.memory_ops_fused);
  read_key(j, "byte_ratio_broadcast", t.byte_ratio_broadcast);
  read_key(j, "byte_ratio_full", t.byte_ratio_full);
  read_key(j, "cos_accesses_unfused", t.cos_accesses_unfused);
  read_key(j, "cos_accesses_fused", t.cos_accesses_fused);
  read_key(j, "chain_lengths", t.chain_lengths);
  read_key(j, "chain_bytes_per_element_unfused", t.chain_bytes_per_element_unfused);
  read_key(j, "chain_bytes_per_element_fused", t.chain_bytes_per_element_fused);
  read_key(j, "small_bytes", t.small_bytes);
}

void from_json(const nlohmann::ordered_json& j, ChainMeasure& c) {
  read_key(j, "length", c.length);
  get(j, "unfused", c.unfused);
  get(j, "fused", c.fused);
}

void from_json(const nlohmann::ordered_json& j, FusionMeasured& m) {
  read_key(j, "unfused_us", m.unfused_us);
  read_key(j, "fused_us", m.fused_us);
  read_key(j, "speedup", m.speedup);
  read_key(j, "effective_gbps", m.effective_gbps);
  read_key(j, "max_abs_err", m.max_abs_err);
  get(j, "unfused", m.unfused);
  get(j, "fused", m.fused);
  read_key(j, "speedup_broadcast", m.speedup_broadcast);
  read_key(j, "speedup_full", m.speedup_full);
  read_key(j, "stream_copy_gbps", m.stream_copy_gbps);
  read_key(j, "effective_fraction_of_stream", m.effective_fraction_of_stream);
  get(j, "cos", m.cos);
  get(j, "cos_cos_unfused", m.cos_cos_unfused);
  get(j, "cos_cos_fused", m.cos_cos_fused);
  get(j, "relu", m.relu);
  get(j, "gelu", m.gelu);
  read_key(j, "cos_cos_speedup", m.cos_cos_speedup);
  read_key(j, "cos_cos_over_cos", m.cos_cos_over_cos);
  read_key(j, "gelu_over_relu", m.gelu_over_relu);
  get(j, "small_unfused", m.small_unfused);
  get(j, "small_fused", m.small_fused);
  get(j, "dispatch", m.dispatch);
  read_key(j, "dispatch_what", m.dispatch_what);
  read_key(j, "small_speedup", m.small_speedup);
  read_key(j, "error_tolerance", m.error_tolerance);
  read_key(j, "wrong", m.wrong);
  read_flag_key(j, "speedup_bar_met", m.speedup_bar_met);
  get(j, "unfused_broadcast", m.unfused_broadcast);
  get(j, "fused_broadcast", m.fused_broadcast);
  get(j, "unfused_full", m.unfused_full);
  get(j, "fused_full", m.fused_full);
  read_key(j, "chains", m.chains);
}

}  // namespace dlsys::fusion
