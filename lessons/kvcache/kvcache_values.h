#pragma once
// The KV-cache lesson's typed values: the sizing of the chosen model (and of the live decoder) from the closed
// forms, and what one run of the live decoder measured. `dlsys-lab run --json` writes them under "theory" and
// "measured" with these field names as keys, in this order; figures the config cannot fix are written as null.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/lesson_values.h"

namespace dlsys::kvcache {

struct KvCacheTheory {
  std::string model, model_source;
  std::int64_t layers = 0, heads = 0, kv_heads = 0, head_dim = 0;
  std::int64_t sliding_window = 0, window_layers = 0;  // 0: every layer attends to every earlier token
  int kv_element_bits = 0;
  std::int64_t bytes_per_token = 0;  // 2 x layers x kv_heads x head_dim x bits / 8 (latent: see kv_theory.h)
  double bytes_per_token_mib = 0;
  std::int64_t cached_tokens = 0, kv_bytes = 0;
  double kv_gb = 0, kv_gib = 0;  // 1e9 and 2^30 bytes
  std::int64_t parameters = 0, weights_bytes = 0;
  std::int64_t training_states_bytes = 0;  // 16 bytes per parameter with mixed-precision Adam (ZeRO, section 3.1)
  std::int64_t workspace_bytes = 0, total_bytes = 0;
  double total_gb = 0, total_gib = 0;
  std::int64_t gpu_bytes = 0;
  std::string gpu_source;
  bool fits = false;
  std::int64_t max_batch_fit = 0;
  std::int64_t max_seq_fit = 0;  // what memory allows; -1: any length (the sliding window caps the cache)
  std::int64_t paged_block_tokens = 0, paged_blocks_per_seq = 0, paged_blocks = 0, paged_waste_bytes = 0;
  std::int64_t reserve_tokens = 0, reserved_bytes = 0, reserve_waste_bytes = 0;
  // The live decoder: the same formula with its own shape, fp32, batch 1.
  std::int64_t live_bytes_per_token = 0, live_kv_bytes = 0;
  double live_flops_cached_last = 0, live_flops_uncached_last = 0, live_flops_ratio_last = 0;

  // The model's shape beyond the formula's factors.
  std::string model_type;
  std::int64_t hidden_size = 0;                         // 0 when the config does not say
  std::string attention;                                // "multi-head", "grouped-query", "multi-query" or "latent"
  std::int64_t cache_elements_per_layer_token = 0;      // 2 x kv_heads x head_dim, or kv_lora_rank + qk_rope_head_dim
  std::int64_t kv_lora_rank = 0, qk_rope_head_dim = 0;  // latent attention only
  std::int64_t per_head_kv_bytes = 0;  // the cache if every query head kept its own K and V; 0 when it already does
  std::int64_t experts_routed = 0, experts_per_token = 0, experts_shared = 0;  // 0 for a dense model
  std::int64_t active_parameters = 0;  // weights one token multiplies by (lookups and unused experts aside)
  bool tied_embeddings = false;
  std::string tied_embeddings_basis;         // where that came from: the file, or the model type's default
  std::string parameter_layout;              // how the parameters are counted
  std::vector<std::string> other_spellings;  // keys read under another family's name (GPT-2's n_layer, ...)
  std::vector<std::string> notes;            // how the config was read, in sentences (model_notes.h)
  // What the config cannot fix: without intermediate_size or vocab_size the cache is sized but not the weights.
  bool weights_known = true;
  std::vector<std::string> missing_keys;
  std::vector<std::string> not_computed;  // "weights", "total", "fit", "decode intensity"
  // The longest usable context: memory's limit capped by the trained length.
  std::int64_t max_positions = 0;   // max_position_embeddings; 0 when the config does not say
  std::int64_t max_seq_usable = 0;  // -1: any length
  std::string max_seq_limited_by;   // "memory", "max_position_embeddings" or "the sliding window"
  // One decode step (and the prefill) on the chosen GPU's roofline.
  std::string gpu;                                                              // the `gpu` parameter
  std::string gpu_name;                                                         // "H100 SXM"; empty for this machine
  double gpu_peak_tflops = 0, gpu_bandwidth_tbps = 0, ridge_flop_per_byte = 0;  // 0 for this machine
  std::string gpu_spec_source;
  bool decode_known = false;  // needs the weights (and experts per token for a mixture of experts)
  double decode_flops = 0, decode_bytes = 0, decode_intensity = 0, decode_weights_only_intensity = 0;
  std::string decode_bound;       // "memory-bound", "compute-bound", or empty without a datasheet GPU
  double decode_roofline_us = 0;  // the roofline's floor for one decode step
  double prefill_intensity = 0;
  std::string prefill_bound;
};

// The fields written as null when the config cannot fix them.
inline constexpr const char* kWeightsDependentKeys[] = {
    "parameters", "weights_bytes", "training_states_bytes", "total_bytes",    "total_gb",         "total_gib",
    "fits",       "max_batch_fit", "max_seq_fit",           "max_seq_usable", "active_parameters"};
inline constexpr const char* kRooflineKeys[] = {"decode_flops",       "decode_bytes",
                                                "decode_intensity",   "decode_weights_only_intensity",
                                                "decode_roofline_us", "prefill_intensity"};

// Written field by field (the same expansion DLSYS_VALUES_TO_JSON uses), then the unknown figures set to null.
inline void to_json(nlohmann::ordered_json& nlohmann_json_j, const KvCacheTheory& nlohmann_json_t) {
  NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(
      NLOHMANN_JSON_TO, model, model_source, layers, heads, kv_heads, head_dim, sliding_window, window_layers,
      kv_element_bits, bytes_per_token, bytes_per_token_mib, cached_tokens, kv_bytes, kv_gb, kv_gib, parameters,
      weights_bytes, training_states_bytes, workspace_bytes, total_bytes, total_gb, total_gib, gpu_bytes, gpu_source,
      fits, max_batch_fit, max_seq_fit, paged_block_tokens, paged_blocks_per_seq, paged_blocks, paged_waste_bytes,
      reserve_tokens, reserved_bytes, reserve_waste_bytes, live_bytes_per_token, live_kv_bytes, live_flops_cached_last,
      live_flops_uncached_last, live_flops_ratio_last))
  // The macro takes at most 63 names at a time.
  NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(
      NLOHMANN_JSON_TO, model_type, hidden_size, attention, cache_elements_per_layer_token, kv_lora_rank,
      qk_rope_head_dim, per_head_kv_bytes, experts_routed, experts_per_token, experts_shared, active_parameters,
      tied_embeddings, tied_embeddings_basis, parameter_layout, other_spellings, notes, weights_known, missing_keys,
      not_computed, max_positions, max_seq_usable, max_seq_limited_by, gpu, gpu_name, gpu_peak_tflops,
      gpu_bandwidth_tbps, ridge_flop_per_byte, gpu_spec_source, decode_known, decode_flops, decode_bytes,
      decode_intensity, decode_weights_only_intensity, decode_bound, decode_roofline_us, prefill_intensity,
      prefill_bound))
  if (!nlohmann_json_t.weights_known)
    for (const char* key : kWeightsDependentKeys) nlohmann_json_j[key] = nullptr;
  if (!nlohmann_json_t.decode_known)
    for (const char* key : kRooflineKeys) nlohmann_json_j[key] = nullptr;
  if (nlohmann_json_t.ridge_flop_per_byte == 0) nlohmann_json_j["decode_roofline_us"] = nullptr;
}

// Reads the theory back; the keys written as null (figures that need the weights, a datasheet GPU or the decode
// shape) keep their struct defaults, as they were when written.
inline bool kvcache_key_may_be_null(const std::string& key) {
  for (const char* k : kWeightsDependentKeys)
    if (key == k) return true;
  for (const char* k : kRooflineKeys)
    if (key == k) return true;
  return false;
}
#define DLSYS_KVCACHE_FROM_ONE(field)                                                                              \
  if (!(kvcache_key_may_be_null(#field) && nlohmann_json_j.contains(#field) && nlohmann_json_j[#field].is_null())) \
    ::dlsys::read_key(nlohmann_json_j, #field, nlohmann_json_t.field);
inline void from_json(const nlohmann::ordered_json& nlohmann_json_j, KvCacheTheory& nlohmann_json_t) {
  NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(
      DLSYS_KVCACHE_FROM_ONE, model, model_source, layers, heads, kv_heads, head_dim, sliding_window, window_layers,
      kv_element_bits, bytes_per_token, bytes_per_token_mib, cached_tokens, kv_bytes, kv_gb, kv_gib, parameters,
      weights_bytes, training_states_bytes, workspace_bytes, total_bytes, total_gb, total_gib, gpu_bytes, gpu_source,
      fits, max_batch_fit, max_seq_fit, paged_block_tokens, paged_blocks_per_seq, paged_blocks, paged_waste_bytes,
      reserve_tokens, reserved_bytes, reserve_waste_bytes, live_bytes_per_token, live_kv_bytes, live_flops_cached_last,
      live_flops_uncached_last, live_flops_ratio_last, model_type))
  NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(
      DLSYS_KVCACHE_FROM_ONE, hidden_size, attention, cache_elements_per_layer_token, kv_lora_rank, qk_rope_head_dim,
      per_head_kv_bytes, experts_routed, experts_per_token, experts_shared, active_parameters, tied_embeddings,
      tied_embeddings_basis, parameter_layout, other_spellings, notes, weights_known, missing_keys, not_computed,
      max_positions, max_seq_usable, max_seq_limited_by, gpu, gpu_name, gpu_peak_tflops, gpu_bandwidth_tbps,
      ridge_flop_per_byte, gpu_spec_source, decode_known, decode_flops, decode_bytes, decode_intensity,
      decode_weights_only_intensity, decode_bound, decode_roofline_us, prefill_intensity, prefill_bound))
}
#undef DLSYS_KVCACHE_FROM_ONE

struct KvCacheMeasured {
  std::int64_t kv_allocated_bytes = 0;  // the ledger's peak for the cache
  bool kv_matches_formula = false;
  double decode_us_cached = 0, decode_us_cached_min = 0, decode_us_cached_max = 0;        // the last token
  double decode_us_uncached = 0, decode_us_uncached_min = 0, decode_us_uncached_max = 0;  // recomputing K, V
  int last_step_repeats = 0;
  double speedup = 0;      // uncached / cached at the last token
  double speedup_bar = 0;  // the smallest speed-up the lesson counts as the cache clearly winning
  bool meets_bar = false;
  std::int64_t last_position = 0;
  double generate_us_cached = 0, generate_us_uncached = 0;  // every position, once each
  bool tokens_match = false;
  double max_abs_logit_diff = 0;
  double cached_gflops_last = 0, uncached_gflops_last = 0;
};

DLSYS_VALUES_JSON(KvCacheMeasured, kv_allocated_bytes, kv_matches_formula, decode_us_cached, decode_us_cached_min,
                  decode_us_cached_max, decode_us_uncached, decode_us_uncached_min, decode_us_uncached_max,
                  last_step_repeats, speedup, speedup_bar, meets_bar, last_position, generate_us_cached,
                  generate_us_uncached, tokens_match, max_abs_logit_diff, cached_gflops_last, uncached_gflops_last)

}  // namespace dlsys::kvcache
