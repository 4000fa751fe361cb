#pragma once
// A model as the KV-cache lesson needs it: the attention shape from a Hugging Face-style config.json, plus the sizes
// that fix its parameter count. Presets live in assets/models/<name>.json, in the same format as a user's file, so
// one parser reads both; each preset names the config.json and the paper it was taken from.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dlsys::kvcache {

// What one layer caches per token.
enum class AttentionKind {
  Standard,  // a key and a value vector per KV head: multi-head, grouped-query or multi-query attention
  Latent,    // multi-head latent attention (DeepSeek-V2/V3): one compressed latent plus one rotary key
};

// Multi-head latent attention's widths (DeepSeek-V2 paper, section 2.1). The cache keeps, per layer and token, the
// latent c_KV (kv_lora_rank elements) and the decoupled rotary key (qk_rope_head_dim elements) that every head shares.
struct LatentAttention {
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t qk_nope_head_dim = 0;  // per head: the key's part without position; 0 when the file does not say
  std::int64_t v_head_dim = 0;        // per head: the value's width; 0 when the file does not say
  std::int64_t q_lora_rank = 0;       // 0: queries come straight from the hidden state (DeepSeek-V2-Lite)
};

// A mixture-of-experts MLP. Three families spell it differently:
//   Mixtral:  num_local_experts, num_experts_per_tok; each expert is intermediate_size wide; every layer routed.
//   DeepSeek: n_routed_experts, n_shared_experts, moe_intermediate_size; the first first_k_dense_replace layers
//             stay dense, then every moe_layer_freq-th layer is routed.
//   Qwen:     num_experts, moe_intermediate_size, shared_expert_intermediate_size (one gated shared expert);
//             layers in mlp_only_layers stay dense, else every decoder_sparse_step-th layer is routed.
struct Experts {
  std::string family;             // "" for a dense model; "mixtral", "deepseek" or "qwen"
  std::int64_t routed = 0;        // experts the router chooses from
  std::int64_t per_token = 0;     // routed experts each token uses; 0 when the file does not say
  std::int64_t shared = 0;        // experts every token uses, each as wide as a routed one (DeepSeek)
  std::int64_t width = 0;         // one routed expert's intermediate size; 0 when the file does not say
  std::int64_t shared_width = 0;  // Qwen2-MoE: the shared expert's intermediate size (it has a gate of its own)
  std::int64_t moe_layers = 0;    // layers whose MLP is routed; the others use intermediate_size
  bool router_bias = false;       // DeepSeek-V3's topk_method "noaux_tc" keeps a bias per expert
  bool any() const { return routed > 0; }
};

// How the weights are laid out, for the parameter count.
enum class Layout {
  LlamaStyle,  // gated MLP (three matrices), RMSNorm, rotary positions: Llama, Mistral, Gemma, Qwen, DeepSeek
  Gpt2,        // learned positions, LayerNorm, a two-matrix MLP, biases everywhere, output tied to the embeddings
};

struct ModelConfig {
  std::string name;                 // preset name or the file path
  std::string source;               // where the numbers come from ("_source" in a preset)
  std::string nominal_parameters;   // the paper's rounded size, e.g. "7B (...)"; empty for user files
  std::string model_type;           // "llama", "mistral", "gemma"; may be empty
  std::int64_t layers = 0;          // num_hidden_layers (n_layer, n_layers, num_layers)
  std::int64_t heads = 0;           // num_attention_heads (n_head, n_heads, num_heads): query heads
  std::int64_t kv_heads = 0;        // num_key_value_heads: = heads (MHA), 1 (MQA), in between (GQA)
  std::int64_t hidden = 0;          // hidden_size (n_embd, d_model); 0 when the file does not say
  std::int64_t head_dim = 0;        // head_dim, or hidden_size / num_attention_heads when absent; latent: nope + rope
  std::int64_t intermediate = 0;    // intermediate_size (n_inner, ffn_hidden_size); 0 when the file does not say
  std::int64_t vocab = 0;           // vocab_size; 0 when the file does not say
  std::int64_t max_positions = 0;   // max_position_embeddings (n_positions, ...); 0 when the file does not say
  std::int64_t sliding_window = 0;  // sliding_window; 0 = none (attention sees the whole prefix)
  std::int64_t window_layers = 0;   // layers that use the window: all (Mistral), alternate ones (Gemma-2), 0 if none
  AttentionKind attention = AttentionKind::Standard;
  LatentAttention latent;
  Experts experts;
  Layout layout = Layout::LlamaStyle;
  bool tied_embeddings = false;       // the output layer reuses the embedding matrix
  std::string tied_embeddings_basis;  // why: "tie_word_embeddings: true in the file", or whose default was used
  // Smaller terms of the count that some families add.
  bool attention_bias = false;  // q, k, v and o biases (attention_bias: true)
  bool qkv_bias = false;        // q, k and v biases only (Qwen2)
  bool mlp_bias = false;        // biases on the MLP's matrices (mlp_bias: true)
  int norms_per_layer = 2;      // RMSNorm weight vectors per layer: 2, or 4 (Gemma-2, Gemma-3)
  bool qk_norm = false;         // a norm of head_dim on queries and on keys in every layer (Qwen3, Gemma-3)
  std::string layout_note;      // how the parameters are counted, in words, and whether that is assumed
  std::vector<std::string> weights_missing;  // keys the parameter count needs that the file lacks
  std::vector<std::string> other_spellings;  // keys read under another family's name, e.g. "n_layer"
};

// Parses a config.json. `origin` names the file in messages. Throws BadInput naming the line of a JSON syntax
// error, a missing key the cache needs, or a value that is not a positive integer.
//
// Conventions, as Hugging Face's configuration classes apply them:
//   num_key_value_heads absent -> num_attention_heads (plain multi-head attention), or 1 with "multi_query": true;
//   head_dim absent            -> hidden_size / num_attention_heads (must divide exactly);
//   sliding_window absent or null, or use_sliding_window false -> no window;
//   tie_word_embeddings absent -> the model type's default (Gemma, Gemma-2, Gemma-3, GPT-2: tied; Llama, Mistral,
//                                 Mixtral, Qwen2/3, DeepSeek-V2/V3, Phi-3: untied); unknown types are taken as
//                                 untied, and the basis says so.
// Other families' spellings are read too (GPT-2's n_layer, n_head, n_embd, n_positions, n_inner; num_kv_heads,
// n_head_kv, ...); two spellings of one size that disagree are refused.
// intermediate_size and vocab_size only fix the weights: without them the cache is still sized, and
// `weights_missing` names them. Which layers use the window: "layer_types" ("sliding_attention" /
// "full_attention") when given; else Gemma-2's alternation (even layers local) for cache_implementation "hybrid" or
// model_type "gemma2"; else "sliding_window_pattern" N (every Nth layer global, Gemma-3); else "max_window_layers"
// (Qwen2: layers from there on); else every layer. Keys that change the cache in ways not modelled here (chunked
// attention, shared KV layers, a quantized cache) are refused by name.
ModelConfig parse_model_config(std::string_view json_text, const std::string& origin);
ModelConfig load_model_config_file(const std::string& path);

// Names of the presets compiled in from assets/models/, sorted.
std::vector<std::string> preset_names();
// Throws BadInput listing the presets when `name` is not one.
ModelConfig load_preset(const std::string& name);

}  // namespace dlsys::kvcache
