#pragma once
// A model as the KV-cache lesson needs it: the attention shape from a Hugging Face-style config.json, plus the sizes
// that fix its parameter count. Presets live in assets/models/<name>.json, in the same format as a user's file, so
// one parser reads both; each preset names the config.json and the paper it was taken from.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dlsys::kvcache {

struct ModelConfig {
  std::string name;                 // preset name or the file path
  std::string source;               // where the numbers come from ("_source" in a preset)
  std::string nominal_parameters;   // the paper's rounded size, e.g. "7B (...)"; empty for user files
  std::string model_type;           // "llama", "mistral", "gemma"; may be empty
  std::int64_t layers = 0;          // num_hidden_layers
  std::int64_t heads = 0;           // num_attention_heads (query heads)
  std::int64_t kv_heads = 0;        // num_key_value_heads: = heads (MHA), 1 (MQA), in between (GQA)
  std::int64_t hidden = 0;          // hidden_size (d_model)
  std::int64_t head_dim = 0;        // head_dim, or hidden_size / num_attention_heads when absent
  std::int64_t intermediate = 0;    // intermediate_size (MLP width)
  std::int64_t vocab = 0;           // vocab_size
  bool tied_embeddings = false;     // tie_word_embeddings: the output layer reuses the embedding matrix
  std::int64_t max_positions = 0;   // max_position_embeddings; 0 when the file does not say
  std::int64_t sliding_window = 0;  // sliding_window; 0 = none (attention sees the whole prefix)
  std::int64_t window_layers = 0;   // layers that use the window: all (Mistral), alternate ones (Gemma-2), 0 if none
};

// Parses a config.json. `origin` names the file in messages. Throws BadInput naming the line of a JSON syntax
// error, a missing key, or a value that is not a positive integer.
//
// Conventions, as Hugging Face's LlamaConfig / MistralConfig apply them:
//   num_key_value_heads absent -> num_attention_heads (plain multi-head attention);
//   head_dim absent            -> hidden_size / num_attention_heads (must divide exactly);
//   sliding_window absent or null, or use_sliding_window false -> no window;
//   tie_word_embeddings absent -> false (Llama's and Mistral's default; Gemma's files say true).
// Which layers use the window: "layer_types" ("sliding_attention" / "full_attention") when given; else Gemma-2's
// alternation (even layers local) for cache_implementation "hybrid" or model_type "gemma2"; else
// "sliding_window_pattern" N (every Nth layer global, Gemma-3); else "max_window_layers" (Qwen2: layers from there
// on); else every layer. Keys that change the cache in ways not modelled here (experts, latent attention, chunked
// attention, shared KV layers, a quantized cache) are refused by name.
ModelConfig parse_model_config(std::string_view json_text, const std::string& origin);
ModelConfig load_model_config_file(const std::string& path);

// Names of the presets compiled in from assets/models/, sorted.
std::vector<std::string> preset_names();
// Throws BadInput listing the presets when `name` is not one.
ModelConfig load_preset(const std::string& name);

// Parameters of a Llama-style decoder (the architecture of every preset): embeddings, per layer the q, k, v, o
// projections (no biases), a gated MLP of three matrices and two RMSNorm weight vectors, a final norm and the output
// layer unless it is tied to the embeddings. Throws BadInput when the count overflows 64 bits.
std::int64_t parameter_count(const ModelConfig& model);

}  // namespace dlsys::kvcache
