#include "lessons/kvcache/kvcache_values.h"

namespace dlsys::kvcache {

namespace {
// The theory's keys in the order written; two lists only because one takes at most 63 names.
DLSYS_VALUES_PART(CacheKeys, KvCacheTheory, model, model_source, layers, heads, kv_heads, head_dim, sliding_window,
                  window_layers, kv_element_bits, bytes_per_token, bytes_per_token_mib, cached_tokens, kv_bytes, kv_gb,
                  kv_gib, parameters, weights_bytes, training_states_bytes, workspace_bytes, total_bytes, total_gb,
                  total_gib, gpu_bytes, gpu_source, fits, max_batch_fit, max_seq_fit, paged_block_tokens,
                  paged_blocks_per_seq, paged_blocks, paged_waste_bytes, reserve_tokens, reserved_bytes,
                  reserve_waste_bytes, live_bytes_per_token, live_kv_bytes, live_flops_cached_last,
                  live_flops_uncached_last, live_flops_ratio_last)
DLSYS_VALUES_PART(ModelKeys, KvCacheTheory, model_type, hidden_size, attention, cache_elements_per_layer_token,
                  kv_lora_rank, qk_rope_head_dim, per_head_kv_bytes, experts_routed, experts_per_token, experts_shared,
                  active_parameters, tied_embeddings, tied_embeddings_basis, parameter_layout, other_spellings, notes,
                  weights_known, missing_keys, not_computed, max_positions, max_seq_usable, max_seq_limited_by, gpu,
                  gpu_name, gpu_peak_tflops, gpu_bandwidth_tbps, ridge_flop_per_byte, gpu_spec_source, decode_known,
                  decode_flops, decode_bytes, decode_intensity, decode_weights_only_intensity, decode_bound,
                  decode_roofline_us, prefill_intensity, prefill_bound)
}  // namespace

void to_json(nlohmann::ordered_json& json, const KvCacheTheory& theory) {
  json = nlohmann::ordered_json::object();
  CacheKeys::write(json, theory);
  ModelKeys::write(json, theory);
}

void from_json(const nlohmann::ordered_json& json, KvCacheTheory& theory) {
  CacheKeys::read(json, theory);
  ModelKeys::read(json, theory);
}

}  // namespace dlsys::kvcache
