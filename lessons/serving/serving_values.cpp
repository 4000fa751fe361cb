#include "lessons/serving/serving_values.h"

#include "engine/json_read.h"

namespace dlsys::serving {

void to_json(nlohmann::ordered_json& j, const SpeculativeMeasured& m) {
  j["k"] = m.k;
  j["draft_layers"] = m.draft_layers;
  j["target_layers"] = m.target_layers;
  j["requests"] = m.requests;
  j["quiet_scale"] = m.quiet_scale;
  if (m.accepted) j["accepted"] = *m.accepted;
  if (m.rejections) j["rejections"] = *m.rejections;
  if (m.target_passes) j["target_passes"] = *m.target_passes;
  j["acceptance_rate"] = m.acceptance_rate;
  j["tokens_per_target_pass"] = m.tokens_per_target_pass;
  j["expected_tokens_per_pass"] = m.expected_tokens_per_pass;
  j["greedy_ms"] = m.greedy_ms;
  j["speculative_ms"] = m.speculative_ms;
  j["speculative_speedup"] = m.speculative_speedup;
  j["identical"] = m.identical;
}

void from_json(const nlohmann::ordered_json& j, SpeculativeMeasured& m) {
  read_key(j, "k", m.k);
  read_key(j, "draft_layers", m.draft_layers);
  read_key(j, "target_layers", m.target_layers);
  read_key(j, "requests", m.requests);
  read_key(j, "quiet_scale", m.quiet_scale);
  read_key_if_present(j, "accepted", m.accepted);
  read_key_if_present(j, "rejections", m.rejections);
  read_key_if_present(j, "target_passes", m.target_passes);
  read_key(j, "acceptance_rate", m.acceptance_rate);
  read_key(j, "tokens_per_target_pass", m.tokens_per_target_pass);
  read_key(j, "expected_tokens_per_pass", m.expected_tokens_per_pass);
  read_key(j, "greedy_ms", m.greedy_ms);
  read_key(j, "speculative_ms", m.speculative_ms);
  read_key(j, "speculative_speedup", m.speculative_speedup);
  read_key(j, "identical", m.identical);
}

void to_json(nlohmann::ordered_json& j, const ServingMeasured& m) {
  j["policy"] = m.policy;
  j["ttft_ms_p50"] = m.ttft_ms_p50;
  j["tpot_ms_p50"] = m.tpot_ms_p50;
  j["latency_ms_p50"] = m.latency_ms_p50;
  j["latency_ms_p99"] = m.latency_ms_p99;
  j["tokens_per_s"] = m.tokens_per_s;
  j["padding_fraction"] = m.padding_fraction;
  if (m.acceptance_rate) j["acceptance_rate"] = *m.acceptance_rate;
  if (m.speculative_speedup) j["speculative_speedup"] = *m.speculative_speedup;
  j["tokens_identical"] = m.tokens_identical;
  j["continuous_over_static"] = m.continuous_over_static;
  j["throughput_ratio_bar"] = m.throughput_ratio_bar;
  j["meets_throughput_bar"] = m.meets_throughput_bar;
  j["default_stream"] = m.default_stream;
  j["policies"] = m.policies;
  j["curve"] = m.curve;
  j["adaptive_knobs"] = m.adaptive_knobs;
  j["peak_gflops"] = m.peak_gflops;
  j["bandwidth_gbps"] = m.bandwidth_gbps;
  j["roofline"] = m.roofline;
  j["context_prompt"] = m.context_prompt;
  j["context_step_ms"] = m.context_step_ms;
  j["context_attended"] = m.context_attended;
  j["context_kv_bytes"] = m.context_kv_bytes;
  j["kv_budget_bytes"] = m.kv_budget_bytes;
  j["kv_bytes_per_token"] = m.kv_bytes_per_token;
  j["block_tokens"] = m.block_tokens;
  j["contiguous_fit"] = m.contiguous_fit;
  j["paged_fit"] = m.paged_fit;
  j["peak_kv_tokens_continuous"] = m.peak_kv_tokens_continuous;
  j["peak_kv_blocks_continuous"] = m.peak_kv_blocks_continuous;
  if (m.speculative) j["speculative"] = *m.speculative;
  j["device"] = m.device;
  if (m.cpu_match_fraction) j["cpu_match_fraction"] = *m.cpu_match_fraction;
}

void from_json(const nlohmann::ordered_json& j, ServingMeasured& m) {
  read_key(j, "policy", m.policy);
  read_key(j, "ttft_ms_p50", m.ttft_ms_p50);
  read_key(j, "tpot_ms_p50", m.tpot_ms_p50);
  read_key(j, "latency_ms_p50", m.latency_ms_p50);
  read_key(j, "latency_ms_p99", m.latency_ms_p99);
  read_key(j, "tokens_per_s", m.tokens_per_s);
  read_key(j, "padding_fraction", m.padding_fraction);
  read_key_if_present(j, "acceptance_rate", m.acceptance_rate);
  read_key_if_present(j, "speculative_speedup", m.speculative_speedup);
  read_key(j, "tokens_identical", m.tokens_identical);
  read_key(j, "continuous_over_static", m.continuous_over_static);
  read_key(j, "throughput_ratio_bar", m.throughput_ratio_bar);
  read_key(j, "meets_throughput_bar", m.meets_throughput_bar);
  read_key(j, "default_stream", m.default_stream);
  read_key(j, "policies", m.policies);
  read_key(j, "curve", m.curve);
  read_key(j, "adaptive_knobs", m.adaptive_knobs);
  read_key(j, "peak_gflops", m.peak_gflops);
  read_key(j, "bandwidth_gbps", m.bandwidth_gbps);
  read_key(j, "roofline", m.roofline);
  read_key(j, "context_prompt", m.context_prompt);
  read_key(j, "context_step_ms", m.context_step_ms);
  read_key(j, "context_attended", m.context_attended);
  read_key(j, "context_kv_bytes", m.context_kv_bytes);
  // One entry per generated token in each: the view reads them side by side.
  check_length("context_step_ms", m.context_step_ms.size(), m.context_attended.size(), "one per context_attended");
  check_length("context_kv_bytes", m.context_kv_bytes.size(), m.context_attended.size(), "one per context_attended");
  read_key(j, "kv_budget_bytes", m.kv_budget_bytes);
  read_key(j, "kv_bytes_per_token", m.kv_bytes_per_token);
  read_key(j, "block_tokens", m.block_tokens);
  read_key(j, "contiguous_fit", m.contiguous_fit);
  read_key(j, "paged_fit", m.paged_fit);
  read_key(j, "peak_kv_tokens_continuous", m.peak_kv_tokens_continuous);
  read_key(j, "peak_kv_blocks_continuous", m.peak_kv_blocks_continuous);
  read_key_if_present(j, "speculative", m.speculative);
  read_key(j, "device", m.device);
  read_key_if_present(j, "cpu_match_fraction", m.cpu_match_fraction);
}

}  // namespace dlsys::serving
