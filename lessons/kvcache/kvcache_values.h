#pragma once
// The KV-cache lesson's typed values: the sizing of the chosen model (and of the live decoder) from the closed
// forms, and what one run of the live decoder measured. `dlsys-lab run --json` writes them under "theory" and
// "measured" with these field names as keys, in this order (kvcache_values.cpp lists them); figures the config cannot
// fix, or that need a datasheet GPU, are empty and written as null.
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
  // The weights and what depends on them: empty when the config cannot fix them.
  NullableField<std::int64_t> parameters, weights_bytes;
  NullableField<std::int64_t> training_states_bytes;  // 16 bytes per parameter with mixed-precision Adam (ZeRO, 3.1)
  std::int64_t workspace_bytes = 0;
  NullableField<std::int64_t> total_bytes;
  NullableField<double> total_gb, total_gib;
  std::int64_t gpu_bytes = 0;
  std::string gpu_source;
  NullableField<bool> fits;
  NullableField<std::int64_t> max_batch_fit;
  NullableField<std::int64_t> max_seq_fit;  // what memory allows; -1: any length (the sliding window caps the cache)
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
  // Weights one token multiplies by (lookups and unused experts aside); 0 when the config does not say how many
  // experts a token uses.
  NullableField<std::int64_t> active_parameters;
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
  std::int64_t max_positions = 0;              // max_position_embeddings; 0 when the config does not say
  NullableField<std::int64_t> max_seq_usable;  // -1: any length
  std::string max_seq_limited_by;              // "memory", "max_position_embeddings" or "the sliding window"
  // One decode step (and the prefill) on the chosen GPU's roofline.
  std::string gpu;                                                              // the `gpu` parameter
  std::string gpu_name;                                                         // "H100 SXM"; empty for this machine
  double gpu_peak_tflops = 0, gpu_bandwidth_tbps = 0, ridge_flop_per_byte = 0;  // 0 for this machine
  std::string gpu_spec_source;
  bool decode_known = false;  // needs the weights (and experts per token for a mixture of experts)
  NullableField<double> decode_flops, decode_bytes, decode_intensity, decode_weights_only_intensity;
  std::string decode_bound;                  // "memory-bound", "compute-bound", or empty without a datasheet GPU
  NullableField<double> decode_roofline_us;  // the roofline's floor for one decode step; needs a datasheet GPU
  NullableField<double> prefill_intensity;
  std::string prefill_bound;
};

void to_json(nlohmann::ordered_json& json, const KvCacheTheory& theory);
void from_json(const nlohmann::ordered_json& json, KvCacheTheory& theory);

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
