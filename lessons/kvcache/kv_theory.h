#pragma once
// KV-cache sizing in exact 64-bit integers (every product overflow-checked).
//
//   standard attention: bytes per token = 2 (K and V) x n_layers x n_kv_heads x head_dim x bytes per element
//   latent attention:   bytes per token = (kv_lora_rank + qk_rope_head_dim) x n_layers x bytes per element
//   whole cache         = bytes per token x cached tokens x batch,  cached tokens = min(seq, sliding window)
// where some layers use a sliding window and the others attend to everything (Gemma-2 alternates them), each layer
// counts its own tokens: (full layers x seq + window layers x min(seq, window)) x bytes per layer-token x batch.
//
// Sources: the course (002 section 10.5) gives 2 x n_layers x (n_heads x dim_head) x bytes; with grouped-query or
// multi-query attention only n_kv_heads heads are stored (erratum E7), which is what is used here. Multi-head latent
// attention (DeepSeek-V2 paper, section 2.1.2) caches one compressed latent and one rotary key per layer and token,
// shared by every head, instead of a key and a value per head.
// Element sizes are counted in bits and each figure is rounded up to whole bytes once, so int4 stays exact.
#include <cstdint>
#include <string>
#include <vector>

#include "lessons/kvcache/model_config.h"
#include "lessons/kvcache/parameter_count.h"

namespace dlsys::kvcache {

struct ElementType {
  std::string name;  // "fp16"
  int bits = 0;      // 16
};
const std::vector<ElementType>& element_types();  // fp32, fp16, bf16, fp8, int8, int4
std::vector<std::string> element_type_names();
// Throws BadInput naming `parameter` and the allowed names.
const ElementType& find_element_type(const std::string& name, const std::string& parameter);

struct SizingQuery {
  ModelConfig model;
  ElementType kv_type;
  ElementType weights_type;
  std::int64_t batch = 1;            // sequences decoded together
  std::int64_t seq = 1;              // tokens per sequence (prompt + generated)
  std::int64_t block_tokens = 16;    // paged cache: tokens per block
  std::int64_t workspace_bytes = 0;  // activations and library scratch: an allowance, not derived
  std::int64_t gpu_bytes = 0;        // the memory to fit into
};

struct Sizing {
  std::int64_t cache_elements_per_layer_token = 0;  // 2 x kv_heads x head_dim, or kv_lora_rank + qk_rope_head_dim
  std::int64_t bytes_per_token = 0;                 // one token, all layers, K and V (or latent and rotary key)
  std::int64_t cached_tokens = 0;  // min(seq, sliding window); seq when some layers attend to everything
  std::int64_t kv_bytes = 0;
  // The same cache if every query head kept its own key and value (no grouping, no latent compression); 0 when the
  // model already does that, or when the file lacks a width it needs.
  std::int64_t per_head_kv_bytes = 0;

  // The weights and what depends on them, known when the config gives every size the count needs.
  bool weights_known = false;
  ParameterCount parameters;
  std::int64_t weights_bytes = 0;  // parameters x weight bits / 8, rounded up (int4 packs two per byte)
  std::int64_t workspace_bytes = 0;
  std::int64_t total_bytes = 0;  // weights + KV + workspace
  std::int64_t gpu_bytes = 0;
  std::int64_t max_batch_fit = 0;  // largest batch whose cache fits beside weights and workspace
  std::int64_t max_seq_fit = 0;    // largest seq memory allows at this batch; -1 = any (the sliding window caps it)
  // The longest context the model can use: what memory allows, capped by max_position_embeddings when the file
  // gives it; -1 = any. `max_seq_limited_by` says which limit binds.
  std::int64_t max_seq_usable = 0;
  std::string max_seq_limited_by;  // "memory", "max_position_embeddings" or "the sliding window"

  // Paged cache: ceil(cached / B) blocks per sequence; only the last block of each sequence is partly empty.
  std::int64_t paged_blocks_per_seq = 0;
  std::int64_t paged_blocks = 0;  // over the whole batch
  std::int64_t paged_bytes = 0;
  std::int64_t paged_waste_bytes = 0;
  // Reserving the model's maximum length up front for every request (what a contiguous cache must do).
  std::int64_t reserve_tokens = 0;  // min(max_position_embeddings, window), or the cached tokens when unknown
  std::int64_t reserved_bytes = 0;
  std::int64_t reserve_waste_bytes = 0;
};

// Elements one layer caches per token: 2 x kv_heads x head_dim, or kv_lora_rank + qk_rope_head_dim.
std::int64_t cache_elements_per_layer_token(const ModelConfig& model);
// Throws BadInput when a size is not positive or a product overflows 64 bits.
std::int64_t kv_bytes_per_token(const ModelConfig& model, const ElementType& type);
Sizing size_inference(const SizingQuery& query);

}  // namespace dlsys::kvcache
