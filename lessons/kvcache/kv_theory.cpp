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
  s.cached_tokens = q.model.sliding_window > 0 ? std::min(q.seq, q.model.sliding_window) : q.seq;
  s.kv_bytes = multiply(multiply(s.bytes_per_token, s.cached_tokens, "kv_bytes (bytes per token x tokens)"), q.batch,
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
  s.max_seq_fit = (q.model.sliding_window > 0 && max_tokens >= q.model.sliding_window) ? -1 : max_tokens;

  s.paged_blocks_per_seq = ceil_div(s.cached_tokens, q.block_tokens);
  s.paged_blocks = multiply(s.paged_blocks_per_seq, q.batch, "paged_blocks");
  s.paged_bytes = multiply(multiply(s.paged_blocks, q.block_tokens, "paged tokens"), s.bytes_per_token, "paged bytes");
  s.paged_waste_bytes = s.paged_bytes - s.kv_bytes;

  s.reserve_tokens = q.model.max_positions > 0 ? q.model.max_positions : s.cached_tokens;
  if (q.model.sliding_window > 0) s.reserve_tokens = std::min(s.reserve_tokens, q.model.sliding_window);
  s.reserve_tokens = std::max(s.reserve_tokens, s.cached_tokens);
  s.reserved_bytes =
      multiply(multiply(s.reserve_tokens, s.bytes_per_token, "reserved bytes"), q.batch, "reserved bytes");
  s.reserve_waste_bytes = s.reserved_bytes - s.kv_bytes;
  return s;
}

}  // namespace dlsys::kvcache
