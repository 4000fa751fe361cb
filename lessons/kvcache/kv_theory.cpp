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

std::int64_t kv_bytes_per_token(const ModelConfig& m, const ElementType& type) {
  if (m.layers < 1 || m.kv_heads < 1 || m.head_dim < 1 || type.bits < 1)
    throw BadInput(fmt::format("model '{}': layers, KV heads and head_dim must be positive", m.name));
  const std::string what = "bytes per token (2 x layers x kv_heads x head_dim x bits)";
  const std::int64_t bits =
      multiply(multiply(multiply(multiply(2, m.layers, what), m.kv_heads, what), m.head_dim, what), type.bits, what);
  return ceil_div(bits, 8);  // exact: 2 x bits is a multiple of 8 for every type offered
}

Sizing size_inference(const SizingQuery& q) {
  for (const auto& [name, value] : {std::pair{"batch", q.batch}, {"seq", q.seq}, {"block", q.block_tokens}})
    if (value < 1)
      throw BadInput(fmt::format("parameter '{}': value {} is not allowed; allowed: 1 or more", name, value));
  if (q.workspace_bytes < 0 || q.gpu_bytes < 0) throw BadInput("workspace and GPU memory must not be negative");

  Sizing s;
  s.bytes_per_token = kv_bytes_per_token(q.model, q.kv_type);
  const std::int64_t window = q.model.sliding_window;
  const std::int64_t window_layers = window > 0 ? q.model.window_layers : 0;
  const std::int64_t full_layers = q.model.layers - window_layers;
  // One layer's K and V for one token; 2 x bits is a multiple of 8 for every type offered, so this is exact.
  const std::int64_t layer_bytes_per_token = s.bytes_per_token / q.model.layers;
  // Tokens summed over layers: full layers keep every token, window layers at most the window (Gemma-2 alternates).
  auto layer_tokens = [&](std::int64_t tokens, const char* what) {
    const std::int64_t windowed = window > 0 ? std::min(tokens, window) : tokens;
    return add(multiply(full_layers, tokens, what), multiply(window_layers, windowed, what), what);
  };
  s.cached_tokens = full_layers > 0 ? q.seq : std::min(q.seq, window);
  s.kv_bytes = multiply(multiply(layer_bytes_per_token, layer_tokens(q.seq, "kv_bytes"), "kv_bytes"), q.batch,
                        "kv_bytes (bytes per token x tokens x batch)");

  s.parameters = parameter_count(q.model);
  s.weights_bytes = ceil_div(multiply(s.parameters, q.weights_type.bits, "weights bits (parameters x bits)"), 8);
  s.workspace_bytes = q.workspace_bytes;
  s.total_bytes = add(add(s.weights_bytes, s.kv_bytes, "total_bytes"), s.workspace_bytes, "total_bytes");
  s.gpu_bytes = q.gpu_bytes;

  // What is left for the cache once weights and workspace are placed.
  const std::int64_t left_bytes = std::max<std::int64_t>(0, q.gpu_bytes - s.weights_bytes - s.workspace_bytes);
  const std::int64_t bytes_per_sequence = s.kv_bytes / q.batch;
  s.max_batch_fit = left_bytes / bytes_per_sequence;
  const std::int64_t bytes_per_position = multiply(s.bytes_per_token, q.batch, "bytes per position of the batch");
  const std::int64_t max_tokens = left_bytes / bytes_per_position;
  if (window > 0 && max_tokens >= window) {
    // Past the window only the full layers grow; with none, any length fits.
    const std::int64_t growth_per_position =
        multiply(multiply(layer_bytes_per_token, full_layers, "growth"), q.batch, "bytes per position past the window");
    const std::int64_t at_window = multiply(bytes_per_position, window, "bytes at the window");
    s.max_seq_fit = full_layers == 0 ? -1 : window + (left_bytes - at_window) / growth_per_position;
  } else {
    s.max_seq_fit = max_tokens;
  }

  // Blocks per sequence as the full layers (or, with none, the window layers) hold them; the bytes sum every layer.
  s.paged_blocks_per_seq = ceil_div(s.cached_tokens, q.block_tokens);
  s.paged_blocks = multiply(s.paged_blocks_per_seq, q.batch, "paged_blocks");
  auto block_rounded = [&](std::int64_t tokens) {
    return multiply(ceil_div(tokens, q.block_tokens), q.block_tokens, "paged tokens");
  };
  const std::int64_t paged_layer_tokens =
      add(multiply(full_layers, block_rounded(q.seq), "paged tokens"),
          multiply(window_layers, block_rounded(window > 0 ? std::min(q.seq, window) : q.seq), "paged tokens"),
          "paged tokens");
  s.paged_bytes = multiply(multiply(paged_layer_tokens, layer_bytes_per_token, "paged bytes"), q.batch, "paged bytes");
  s.paged_waste_bytes = s.paged_bytes - s.kv_bytes;

  s.reserve_tokens = q.model.max_positions > 0 ? q.model.max_positions : s.cached_tokens;
  if (window > 0 && full_layers == 0) s.reserve_tokens = std::min(s.reserve_tokens, window);
  s.reserve_tokens = std::max(s.reserve_tokens, s.cached_tokens);
  s.reserved_bytes =
      multiply(multiply(layer_tokens(s.reserve_tokens, "reserved bytes"), layer_bytes_per_token, "reserved bytes"),
               q.batch, "reserved bytes");
  s.reserve_waste_bytes = s.reserved_bytes - s.kv_bytes;
  return s;
}

}  // namespace dlsys::kvcache
