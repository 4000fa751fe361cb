#include "lessons/kvcache/kv_theory.h"

#include <fmt/format.h>

#include <algorithm>

#include "engine/errors.h"
#include "lessons/kvcache/checked_math.h"

namespace dlsys::kvcache {

const std::vector<ElementType>& element_types() {
  static const std::vector<ElementType> types = {{"fp32", 32}, {"fp16", 16}, {"bf16", 16},
                                                 {"fp8", 8},   {"int8", 8},  {"int4", 4}};
  return types;
}

std::vector<std::string> element_type_names() {
  std::vector<std::string> names;
  for (const auto& t : element_types()) names.push_back(t.name);
  return names;
}

const ElementType& find_element_type(const std::string& name, const std::string& parameter) {
  std::string known;
  for (const auto& t : element_types()) {
    if (t.name == name) return t;
    known += (known.empty() ? "" : ", ") + t.name;
  }
  throw BadInput(fmt::format("parameter '{}': unknown type '{}'; allowed: {}", parameter, name, known));
}

std::int64_t cache_elements_per_layer_token(const ModelConfig& m) {
  if (m.attention == AttentionKind::Latent) {
    if (m.latent.kv_lora_rank < 1 || m.latent.qk_rope_head_dim < 1)
      throw BadInput(fmt::format("model '{}': kv_lora_rank and qk_rope_head_dim must be positive", m.name));
    return add(m.latent.kv_lora_rank, m.latent.qk_rope_head_dim, "kv_lora_rank + qk_rope_head_dim");
  }
  if (m.kv_heads < 1 || m.head_dim < 1)
    throw BadInput(fmt::format("model '{}': KV heads and head_dim must be positive", m.name));
  return multiply(multiply(2, m.kv_heads, "2 x kv_heads x head_dim"), m.head_dim, "2 x kv_heads x head_dim");
}

namespace {

// Bits one layer keeps per token.
std::int64_t layer_bits_per_token(const ModelConfig& m, const ElementType& type) {
  if (type.bits < 1) throw BadInput(fmt::format("element type '{}' has no size", type.name));
  return multiply(cache_elements_per_layer_token(m), type.bits, "bits per layer and token");
}

std::int64_t whole_bytes(std::int64_t bits) { return ceil_div(bits, 8); }

// Tokens summed over layers: full layers keep every token, window layers at most the window.
struct LayerTokens {
  std::int64_t full_layers = 0, window_layers = 0, window = 0;
  std::int64_t operator()(std::int64_t tokens, const char* what) const {
    const std::int64_t windowed = window > 0 ? std::min(tokens, window) : tokens;
    return add(multiply(full_layers, tokens, what), multiply(window_layers, windowed, what), what);
  }
};

// What a cache would hold if every query head kept its own key and value (for contrast with GQA, MQA and MLA).
std::int64_t per_head_layer_bits(const ModelConfig& m, const ElementType& type) {
  const std::string what = "the per-head comparison";
  if (m.attention == AttentionKind::Latent) {
    if (m.latent.qk_nope_head_dim == 0 || m.latent.v_head_dim == 0) return 0;
    // Expanded, every head has a key of nope + rope and a value of v_head_dim elements.
    const std::int64_t widths =
        add(add(m.latent.qk_nope_head_dim, m.latent.qk_rope_head_dim, what), m.latent.v_head_dim, what);
    return multiply(multiply(m.heads, widths, what), type.bits, what);
  }
  if (m.kv_heads == m.heads) return 0;
  return multiply(multiply(multiply(2, m.heads, what), m.head_dim, what), type.bits, what);
}

// Weights, total and what fits: only when the config fixes the weights.
void size_weights_and_fit(const SizingQuery& q, const LayerTokens& layer_tokens, std::int64_t layer_bits, Sizing& s) {
  const auto count = count_parameters(q.model);
  s.weights_known = count.has_value();
  if (!s.weights_known) return;
  s.parameters = *count;
  s.weights_bytes = whole_bytes(multiply(count->total, q.weights_type.bits, "weights bits (parameters x bits)"));
  s.total_bytes = add(add(s.weights_bytes, s.kv_bytes, "total_bytes"), s.workspace_bytes, "total_bytes");

  // What is left for the cache once weights and workspace are placed, in bits.
  const std::int64_t left_bits =
      multiply(std::max<std::int64_t>(0, q.gpu_bytes - s.weights_bytes - s.workspace_bytes), 8, "memory left");
  const std::int64_t bits_per_sequence = multiply(layer_tokens(q.seq, "bits per sequence"), layer_bits, "bits");
  s.max_batch_fit = left_bits / bits_per_sequence;
  const std::int64_t bits_per_position =
      multiply(multiply(layer_bits, q.model.layers, "bits per position"), q.batch, "bits per position of the batch");
  const std::int64_t max_tokens = left_bits / bits_per_position;
  const std::int64_t window = layer_tokens.window;
  if (window > 0 && max_tokens >= window && layer_tokens.window_layers > 0) {
    // Past the window only the full layers grow; with none, any length fits.
    const std::int64_t growth = multiply(multiply(layer_bits, layer_tokens.full_layers, "growth"), q.batch,
                                         "bits per position past the window");
    const std::int64_t at_window = multiply(bits_per_position, window, "bits at the window");
    s.max_seq_fit = layer_tokens.full_layers == 0 ? -1 : window + (left_bits - at_window) / growth;
  } else {
    s.max_seq_fit = max_tokens;
  }

  const std::int64_t positions = q.model.max_positions;
  if (positions > 0 && (s.max_seq_fit < 0 || s.max_seq_fit >= positions)) {
    s.max_seq_usable = positions;
    s.max_seq_limited_by = "max_position_embeddings";
  } else {
    s.max_seq_usable = s.max_seq_fit;
    s.max_seq_limited_by = s.max_seq_fit < 0 ? "the sliding window" : "memory";
  }
}

}  // namespace

std::int64_t kv_bytes_per_token(const ModelConfig& m, const ElementType& type) {
  if (m.layers < 1) throw BadInput(fmt::format("model '{}': the layer count must be positive", m.name));
  return whole_bytes(
      multiply(layer_bits_per_token(m, type), m.layers, "bits per token (layers x elements per layer x bits)"));
}

Sizing size_inference(const SizingQuery& q) {
  for (const auto& [name, value] : {std::pair{"batch", q.batch}, {"seq", q.seq}, {"block", q.block_tokens}})
    if (value < 1)
      throw BadInput(fmt::format("parameter '{}': value {} is not allowed; allowed: 1 or more", name, value));
  if (q.workspace_bytes < 0 || q.gpu_bytes < 0) throw BadInput("workspace and GPU memory must not be negative");

  Sizing s;
  s.cache_elements_per_layer_token = cache_elements_per_layer_token(q.model);
  s.bytes_per_token = kv_bytes_per_token(q.model, q.kv_type);
  const std::int64_t layer_bits = layer_bits_per_token(q.model, q.kv_type);
  const std::int64_t window = q.model.sliding_window;
  LayerTokens layer_tokens;
  layer_tokens.window = window;
  layer_tokens.window_layers = window > 0 ? q.model.window_layers : 0;
  layer_tokens.full_layers = q.model.layers - layer_tokens.window_layers;
  s.cached_tokens = layer_tokens.full_layers > 0 ? q.seq : std::min(q.seq, window);
  const std::int64_t cached_layer_tokens = layer_tokens(q.seq, "kv_bytes");
  s.kv_bytes = whole_bytes(multiply(multiply(layer_bits, cached_layer_tokens, "kv_bytes"), q.batch,
                                    "kv_bytes (bytes per token x tokens x batch)"));
  if (const std::int64_t per_head_bits = per_head_layer_bits(q.model, q.kv_type); per_head_bits > 0)
    s.per_head_kv_bytes = whole_bytes(
        multiply(multiply(per_head_bits, cached_layer_tokens, "per-head bytes"), q.batch, "per-head bytes"));
  s.workspace_bytes = q.workspace_bytes;
  s.gpu_bytes = q.gpu_bytes;
  size_weights_and_fit(q, layer_tokens, layer_bits, s);

  // Blocks per sequence as the full layers (or, with none, the window layers) hold them; the bytes sum every layer.
  s.paged_blocks_per_seq = ceil_div(s.cached_tokens, q.block_tokens);
  s.paged_blocks = multiply(s.paged_blocks_per_seq, q.batch, "paged_blocks");
  auto block_rounded = [&](std::int64_t tokens) {
    return multiply(ceil_div(tokens, q.block_tokens), q.block_tokens, "paged tokens");
  };
  const std::int64_t paged_layer_tokens = add(
      multiply(layer_tokens.full_layers, block_rounded(q.seq), "paged tokens"),
      multiply(layer_tokens.window_layers, block_rounded(window > 0 ? std::min(q.seq, window) : q.seq), "paged tokens"),
      "paged tokens");
  s.paged_bytes =
      whole_bytes(multiply(multiply(paged_layer_tokens, layer_bits, "paged bytes"), q.batch, "paged bytes"));
  s.paged_waste_bytes = s.paged_bytes - s.kv_bytes;

  s.reserve_tokens = q.model.max_positions > 0 ? q.model.max_positions : s.cached_tokens;
  if (window > 0 && layer_tokens.full_layers == 0) s.reserve_tokens = std::min(s.reserve_tokens, window);
  s.reserve_tokens = std::max(s.reserve_tokens, s.cached_tokens);
  s.reserved_bytes =
      whole_bytes(multiply(multiply(layer_tokens(s.reserve_tokens, "reserved bytes"), layer_bits, "reserved bytes"),
                           q.batch, "reserved bytes"));
  s.reserve_waste_bytes = s.reserved_bytes - s.kv_bytes;
  return s;
}

}  // namespace dlsys::kvcache
