#pragma once
// The KV-cache lesson's typed values: the sizing of the chosen model (and of the live decoder) from the closed
// forms, and what one run of the live decoder measured. `dlsys-lab run --json` writes them under "theory" and
// "measured" with these field names as keys, in this order.
#include <cstdint>
#include <string>

#include "engine/lesson_values.h"

namespace dlsys::kvcache {

struct KvCacheTheory {
  std::string model, model_source;
  std::int64_t layers = 0, heads = 0, kv_heads = 0, head_dim = 0;
  std::int64_t sliding_window = 0, window_layers = 0;  // 0: every layer attends to every earlier token
  int kv_element_bits = 0;
  std::int64_t bytes_per_token = 0;  // 2 x layers x kv_heads x head_dim x bits / 8
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
  std::int64_t max_seq_fit = 0;  // -1: any length (the sliding window caps the cache)
  std::int64_t paged_block_tokens = 0, paged_blocks_per_seq = 0, paged_blocks = 0, paged_waste_bytes = 0;
  std::int64_t reserve_tokens = 0, reserved_bytes = 0, reserve_waste_bytes = 0;
  // The live decoder: the same formula with its own shape, fp32, batch 1.
  std::int64_t live_bytes_per_token = 0, live_kv_bytes = 0;
  double live_flops_cached_last = 0, live_flops_uncached_last = 0, live_flops_ratio_last = 0;
};

struct KvCacheMeasured {
  std::int64_t kv_allocated_bytes = 0;  // the ledger's peak for the cache
  bool kv_matches_formula = false;
  double decode_us_cached = 0, decode_us_cached_min = 0, decode_us_cached_max = 0;        // the last token
  double decode_us_uncached = 0, decode_us_uncached_min = 0, decode_us_uncached_max = 0;  // recomputing K, V
  int last_step_repeats = 0;
  double speedup = 0;      // uncached / cached at the last token
  double speedup_bar = 0;  // what the lesson expects at least
  bool meets_bar = false;
  std::int64_t last_position = 0;
  double generate_us_cached = 0, generate_us_uncached = 0;  // every position, once each
  bool tokens_match = false;
  double max_abs_logit_diff = 0;
  double cached_gflops_last = 0, uncached_gflops_last = 0;
};

DLSYS_VALUES_TO_JSON(KvCacheTheory, model, model_source, layers, heads, kv_heads, head_dim, sliding_window,
                     window_layers, kv_element_bits, bytes_per_token, bytes_per_token_mib, cached_tokens, kv_bytes,
                     kv_gb, kv_gib, parameters, weights_bytes, training_states_bytes, workspace_bytes, total_bytes,
                     total_gb, total_gib, gpu_bytes, gpu_source, fits, max_batch_fit, max_seq_fit, paged_block_tokens,
                     paged_blocks_per_seq, paged_blocks, paged_waste_bytes, reserve_tokens, reserved_bytes,
                     reserve_waste_bytes, live_bytes_per_token, live_kv_bytes, live_flops_cached_last,
                     live_flops_uncached_last, live_flops_ratio_last)

DLSYS_VALUES_TO_JSON(KvCacheMeasured, kv_allocated_bytes, kv_matches_formula, decode_us_cached, decode_us_cached_min,
                     decode_us_cached_max, decode_us_uncached, decode_us_uncached_min, decode_us_uncached_max,
                     last_step_repeats, speedup, speedup_bar, meets_bar, last_position, generate_us_cached,
                     generate_us_uncached, tokens_match, max_abs_logit_diff, cached_gflops_last, uncached_gflops_last)

}  // namespace dlsys::kvcache
