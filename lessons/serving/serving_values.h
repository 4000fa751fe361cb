#pragma once
// The serving lesson's typed values. `dlsys-lab run serving --json` writes them under "theory" and "measured" with
// these field names as keys; the top-level measured keys describe the chosen policy, the `policies` list all three.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/lesson_values.h"

namespace dlsys::serving {

struct ServingTheory {
  // Weights-only arithmetic intensity, FLOP per byte: every weight met once per pass does 2 FLOP per token in
  // flight. 16-bit weights (2 bytes): about the tokens in flight. This lab's fp32 weights (4 bytes): half that.
  double prefill_intensity = 0;        // 16-bit: the prompt's tokens
  double decode_intensity = 0;         // 16-bit: one token per sequence, max_batch sequences
  double decode_intensity_batch1 = 0;  // 16-bit, one sequence: 1
  double prefill_intensity_fp32 = 0, decode_intensity_fp32 = 0, decode_intensity_batch1_fp32 = 0;
  // The course's example (prompt 1,000 tokens, 200 generated): keys attended by generated token 1 and token 200, and
  // the KV bytes those steps read for Llama-2-7B in 16 bits (524,288 bytes per token).
  int example_prompt = 1000, example_generated = 200;
  std::int64_t example_first_attends = 0, example_last_attends = 0;
  std::int64_t example_bytes_per_token = 0;
  std::int64_t example_first_kv_bytes = 0, example_last_kv_bytes = 0;
  // The lab's model.
  std::int64_t parameters = 0, matmul_parameters = 0, weights_bytes = 0;
  std::int64_t kv_bytes_per_token = 0;  // 2 x layers x d_model x 4 bytes
  double token_matmul_flops = 0;        // 2 x matmul parameters
  double mean_output_tokens = 0;        // of the stream's law after the cut
  double expected_static_padding = 0;   // 0: not computed (the run measures it)
  int draft_layers = 0, target_layers = 0, k = 0;
  double quiet_scale = 0;  // the target's later layers' output projections, scaled
};
DLSYS_VALUES_JSON(ServingTheory, prefill_intensity, decode_intensity, decode_intensity_batch1, prefill_intensity_fp32,
                  decode_intensity_fp32, decode_intensity_batch1_fp32, example_prompt, example_generated,
                  example_first_attends, example_last_attends, example_bytes_per_token, example_first_kv_bytes,
                  example_last_kv_bytes, parameters, matmul_parameters, weights_bytes, kv_bytes_per_token,
                  token_matmul_flops, mean_output_tokens, expected_static_padding, draft_layers, target_layers, k,
                  quiet_scale)

struct PolicyMeasured {
  std::string policy;
  double rate = 0;
  double ttft_ms_p50 = 0, ttft_ms_p99 = 0, tpot_ms_p50 = 0, latency_ms_p50 = 0, latency_ms_p99 = 0;
  double tokens_per_s = 0;                  // generated tokens / (last answer - first arrival)
  double padding_fraction = 0;              // static and adaptive: unused slot-tokens / slot-tokens
  double padding_fraction_closed_form = 0;  // static: from the stream's lengths alone
  std::int64_t generated_tokens = 0;
  int decode_steps = 0, prefills = 0, peak_batch = 0;
  double mean_rows_per_step = 0;  // sequences per decode step (padding rows included)
  std::int64_t peak_kv_tokens = 0;
  double span_s = 0;
};
DLSYS_VALUES_JSON(PolicyMeasured, policy, rate, ttft_ms_p50, ttft_ms_p99, tpot_ms_p50, latency_ms_p50, latency_ms_p99,
                  tokens_per_s, padding_fraction, padding_fraction_closed_form, generated_tokens, decode_steps,
                  prefills, peak_batch, mean_rows_per_step, peak_kv_tokens, span_s)

// Adaptive batching's knobs at a quarter of the rate (where batches fill slowly enough for the timer to matter).
struct KnobPoint {
  int max_batch = 0;
  double delay_ms = 0, rate = 0;
  double tokens_per_s = 0, latency_ms_p50 = 0, latency_ms_p99 = 0;
};
DLSYS_VALUES_JSON(KnobPoint, max_batch, delay_ms, rate, tokens_per_s, latency_ms_p50, latency_ms_p99)

// One point of step 1's roofline: a pass of the real model, timed.
struct RooflinePoint {
  std::string name;           // "prefill 64 tokens", "decode batch 1", "decode batch 8"
  double tokens = 0;          // in flight
  double intensity_fp32 = 0;  // weights-only FLOP per byte, fp32 weights
  double ms = 0;              // median pass time
  double gflops = 0;          // matmul FLOP / time
  double roof_gflops = 0;     // min(peak, bandwidth x intensity) with this machine's ceilings
};
DLSYS_VALUES_JSON(RooflinePoint, name, tokens, intensity_fp32, ms, gflops, roof_gflops)

struct SpeculativeMeasured {
  int k = 0, draft_layers = 0, target_layers = 0, requests = 0;
  double quiet_scale = 0;
  // The counts behind the rate: proposals kept, passes that rejected one (a pass tests its proposals only up to its
  // first rejection), verification passes. Absent from runs recorded before the lab counted rejections; their
  // acceptance_rate is accepted / proposed.
  std::optional<std::int64_t> accepted, rejections, target_passes;
  double acceptance_rate = 0;                // accepted / (accepted + rejections)
  double tokens_per_target_pass = 0;         // generated tokens after the first / verification passes
  double expected_tokens_per_pass = 0;       // (1 - a^(k+1)) / (1 - a) at the measured a
  double greedy_ms = 0, speculative_ms = 0;  // the same requests, target alone and with the draft
  double speculative_speedup = 0;
  bool identical = false;  // every request's tokens equal the target's own greedy tokens
};
DLSYS_VALUES_JSON(SpeculativeMeasured, k, draft_layers, target_layers, requests, quiet_scale, accepted, rejections,
                  target_passes, acceptance_rate, tokens_per_target_pass, expected_tokens_per_pass, greedy_ms,
                  speculative_ms, speculative_speedup, identical)

struct ServingMeasured {
  std::string policy;  // the chosen one; the keys below are its
  double ttft_ms_p50 = 0, tpot_ms_p50 = 0, latency_ms_p50 = 0, latency_ms_p99 = 0, tokens_per_s = 0;
  double padding_fraction = 0;                                 // static's (the chosen policy's when it is adaptive)
  std::optional<double> acceptance_rate, speculative_speedup;  // draft = on
  bool tokens_identical = false;      // every policy and every batch produced the same tokens per request
  double continuous_over_static = 0;  // tokens/s, same stream, same max_batch, same run
  double throughput_ratio_bar = 1.5;
  bool meets_throughput_bar = false;
  bool default_stream = false;            // the stream, model and max_batch the expectation is stated for
  std::vector<PolicyMeasured> policies;   // static, adaptive, continuous at the chosen rate
  std::vector<PolicyMeasured> curve;      // every policy at each swept rate (the chosen rate included)
  std::vector<KnobPoint> adaptive_knobs;  // max_batch and delay_ms varied at a quarter of the rate
  // Step 1: this machine's ceilings and the real model's passes. On the CPU the bandwidth is a read stream measured in
  // the run, and the weights are flushed from the caches before each timed pass (weights_flushed; absent in runs
  // recorded before the lab did so, whose weights stayed in cache).
  double peak_gflops = 0, bandwidth_gbps = 0;
  std::optional<bool> weights_flushed;
  std::vector<RooflinePoint> roofline;
  // Step 2: one sequence decoding at the end of its context.
  int context_prompt = 0;
  std::vector<double> context_step_ms;         // per generated token
  std::vector<std::int64_t> context_attended;  // keys attended by that token
  std::vector<std::int64_t> context_kv_bytes;  // KV bytes that step read
  // Step 6: how many sequences a KV budget holds.
  std::int64_t kv_budget_bytes = 0, kv_bytes_per_token = 0, block_tokens = 0;
  std::int64_t contiguous_fit = 0;  // reserving the whole context per sequence
  std::int64_t paged_fit = 0;       // blocks for each request's real length, the stream's requests in order (cycled)
  std::int64_t peak_kv_tokens_continuous = 0, peak_kv_blocks_continuous = 0;
  std::optional<SpeculativeMeasured> speculative;
  // Where the model ran ("cpu" or "cuda"); on the GPU, the share of the stream's requests whose GPU tokens equal the
  // CPU model's greedy tokens exactly (fp32 sums in another order can round differently and flip a near tie).
  std::string device = "cpu";
  std::optional<double> cpu_match_fraction;
};
// One entry per generated token in each context array: the view reads them side by side.
inline void check_context_lengths(const ServingMeasured& m) {
  check_length("context_step_ms", m.context_step_ms.size(), m.context_attended.size(), "one per context_attended");
  check_length("context_kv_bytes", m.context_kv_bytes.size(), m.context_attended.size(), "one per context_attended");
}
DLSYS_VALUES_TO_JSON(ServingMeasured, policy, ttft_ms_p50, tpot_ms_p50, latency_ms_p50, latency_ms_p99, tokens_per_s,
                     padding_fraction, acceptance_rate, speculative_speedup, tokens_identical, continuous_over_static,
                     throughput_ratio_bar, meets_throughput_bar, default_stream, policies, curve, adaptive_knobs,
                     peak_gflops, bandwidth_gbps, weights_flushed, roofline, context_prompt, context_step_ms,
                     context_attended, context_kv_bytes, kv_budget_bytes, kv_bytes_per_token, block_tokens,
                     contiguous_fit, paged_fit, peak_kv_tokens_continuous, peak_kv_blocks_continuous, speculative,
                     device, cpu_match_fraction)
DLSYS_VALUES_FROM_JSON_CHECKED(ServingMeasured, check_context_lengths, policy, ttft_ms_p50, tpot_ms_p50, latency_ms_p50,
                               latency_ms_p99, tokens_per_s, padding_fraction, acceptance_rate, speculative_speedup,
                               tokens_identical, continuous_over_static, throughput_ratio_bar, meets_throughput_bar,
                               default_stream, policies, curve, adaptive_knobs, peak_gflops, bandwidth_gbps,
                               weights_flushed, roofline, context_prompt, context_step_ms, context_attended,
                               context_kv_bytes, kv_budget_bytes, kv_bytes_per_token, block_tokens, contiguous_fit,
                               paged_fit, peak_kv_tokens_continuous, peak_kv_blocks_continuous, speculative, device,
                               cpu_match_fraction)

}  // namespace dlsys::serving
