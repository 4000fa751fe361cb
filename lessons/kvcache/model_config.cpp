#include "lessons/kvcache/model_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <set>

#include "engine/assets.h"
#include "engine/errors.h"
#include "engine/file_io.h"
#include "engine/json_io.h"
#include "lessons/kvcache/checked_math.h"
#include "lessons/kvcache/parameter_count.h"

namespace dlsys::kvcache {

namespace {

constexpr std::string_view kPresetFolder = "models/";
constexpr std::string_view kPresetSuffix = ".json";

// A value that must be a whole number >= minimum: layers, heads, sizes (minimum 1), or counts that may be 0.
std::int64_t whole_number(const nlohmann::json& value, const std::string& key, const std::string& origin,
                          std::int64_t minimum = 1) {
  if (value.is_number_unsigned() && value.get<std::uint64_t>() > std::uint64_t(INT64_MAX))
    throw BadInput(
        fmt::format("config '{}': key '{}' = {} does not fit in 64 bits", origin, key, describe_json_value(value)));
  if (!value.is_number_integer())
    throw BadInput(
        fmt::format("config '{}': key '{}' must be a whole number, got {}", origin, key, describe_json_value(value)));
  const std::int64_t n = value.get<std::int64_t>();
  if (n < minimum)
    throw BadInput(fmt::format("config '{}': key '{}' must be at least {}, got {}", origin, key, minimum, n));
  return n;
}

bool present(const nlohmann::json& doc, const char* key) { return doc.contains(key) && !doc.at(key).is_null(); }

// Present and meaning something: null, false and 0 are how configs say a feature is off.
bool is_set(const nlohmann::json& doc, const char* key) {
  if (!doc.contains(key)) return false;
  const auto& v = doc.at(key);
  return !(v.is_null() || (v.is_boolean() && !v.get<bool>()) || (v.is_number() && v.get<double>() == 0));
}

std::string optional_text(const nlohmann::json& doc, const char* key) {
  return doc.contains(key) && doc.at(key).is_string() ? doc.at(key).get<std::string>() : std::string();
}

// A true/false key; absent or null gives `fallback`. "false" in quotes would otherwise read as a feature that is on.
bool optional_flag(const nlohmann::json& doc, const char* key, const std::string& origin, bool fallback) {
  if (!present(doc, key)) return fallback;
  if (!doc.at(key).is_boolean())
    throw BadInput(fmt::format("config '{}': key '{}' must be true or false (without quotes), got {}", origin, key,
                               describe_json_value(doc.at(key))));
  return doc.at(key).get<bool>();
}

std::int64_t optional_count(const nlohmann::json& doc, const char* key, const std::string& origin,
                            std::int64_t fallback, std::int64_t minimum) {
  return present(doc, key) ? whole_number(doc.at(key), key, origin, minimum) : fallback;
}

// One size that model families spell differently (Llama's num_hidden_layers is GPT-2's n_layer). The first spelling
// present wins; where `agree` is set, another spelling present with a different value is refused, since the file
// would then say two things.
struct SizeKey {
  std::int64_t value = 0;
  std::string key;  // empty: no spelling present
};

SizeKey read_size(const nlohmann::json& doc, std::initializer_list<const char*> spellings, const std::string& origin,
                  bool agree) {
  SizeKey found;
  for (const char* key : spellings) {
    if (!present(doc, key)) continue;
    const std::int64_t value = whole_number(doc.at(key), key, origin);
    if (found.key.empty()) {
      found = {value, key};
      if (!agree) break;
    } else if (value != found.value) {
      throw BadInput(
          fmt::format("config '{}': keys '{}' = {} and '{}' = {} name the same size with different values; "
                      "keep one",
                      origin, found.key, found.value, key, value));
    }
  }
  return found;
}

// "n_layer, n_layers, num_layers": the spellings after the first, for a message.
std::string other_spellings_phrase(std::initializer_list<const char*> spellings) {
  std::string out;
  for (auto key = spellings.begin() + 1; key < spellings.end(); ++key)
    out += (out.empty() ? "" : ", ") + std::string(*key);
  return out;
}

// Keys of model families whose cache this sizing does not compute: refusing them is better than a wrong size.
void refuse_unmodelled_keys(const nlohmann::json& doc, const std::string& origin) {
  static const std::pair<const char*, const char*> kUnmodelled[] = {
      {"attention_chunk_size", "chunked attention"},
      {"num_kv_shared_layers", "layers that share another layer's KV cache"},
  };
  for (const auto& [key, what] : kUnmodelled)
    if (is_set(doc, key))
      throw BadInput(
          fmt::format("config '{}': key '{}' ({}) is not modelled by this sizing; allowed: decoders (Llama, Mistral, "
                      "Mixtral, Gemma, Qwen, DeepSeek, GPT-2 style) without it",
                      origin, key, what));
  if (doc.contains("cache_implementation") && !doc.at("cache_implementation").is_null()) {
    const auto& v = doc.at("cache_implementation");
    static const char* const kSameSize[] = {"dynamic",          "static", "offloaded",
                                            "offloaded_static", "hybrid", "sliding_window"};
    bool known = false;
    for (const char* name : kSameSize) known = known || (v.is_string() && v.get<std::string>() == name);
    if (!known)
      throw BadInput(
          fmt::format("config '{}': key 'cache_implementation' = {} is not modelled; allowed: dynamic, "
                      "static, offloaded, offloaded_static, hybrid, sliding_window",
                      origin, describe_json_value(v)));
  }
}

// How many layers keep only the sliding window (see the header for the order the keys are read in).
std::int64_t window_layer_count(const nlohmann::json& doc, const ModelConfig& m, const std::string& origin) {
  if (doc.contains("layer_types") && !doc.at("layer_types").is_null()) {
    const auto& types = doc.at("layer_types");
    if (!types.is_array() || static_cast<std::int64_t>(types.size()) != m.layers)
      throw BadInput(fmt::format("config '{}': key 'layer_types' must list one type per layer ({}), got {}", origin,
                                 m.layers, describe_json_value(types)));
    std::int64_t sliding = 0;
    for (const auto& t : types) {
      const std::string name = t.is_string() ? t.get<std::string>() : "";
      if (name == "sliding_attention")
        ++sliding;
      else if (name != "full_attention")
        throw BadInput(
            fmt::format("config '{}': key 'layer_types' has {}; allowed: \"sliding_attention\", "
                        "\"full_attention\"",
                        origin, describe_json_value(t)));
    }
    if (sliding > 0 && m.sliding_window == 0)
      throw BadInput(
          fmt::format("config '{}': key 'layer_types' names sliding layers but there is no "
                      "'sliding_window' (or use_sliding_window is false)",
                      origin));
    return sliding;
  }
  if (m.sliding_window == 0) return 0;
  const bool hybrid = doc.contains("cache_implementation") && doc.at("cache_implementation") == "hybrid";
  if (hybrid || m.model_type == "gemma2") return (m.layers + 1) / 2;  // Gemma-2: layers 0, 2, 4, ... are local
  if (is_set(doc, "sliding_window_pattern")) {
    const std::int64_t pattern = whole_number(doc.at("sliding_window_pattern"), "sliding_window_pattern", origin);
    return m.layers - m.layers / pattern;  // every pattern-th layer is global
  }
  if (doc.contains("max_window_layers") && !doc.at("max_window_layers").is_null()) {
    const auto& v = doc.at("max_window_layers");
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > m.layers)
      throw BadInput(fmt::format("config '{}': key 'max_window_layers' must be a whole number from 0 to {}, got {}",
                                 origin, m.layers, describe_json_value(v)));
    return m.layers - v.get<std::int64_t>();  // Qwen2: layers from max_window_layers on use the window
  }
  return m.layers;
}

// Layers i in [0, n) with i % step == 0, without a loop (a hostile file may claim 10^12 layers).
std::int64_t multiples_below(std::int64_t n, std::int64_t step) { return n / step + (n % step != 0 ? 1 : 0); }

// The experts of a mixture-of-experts config (the families are described in the header).
Experts read_experts(const nlohmann::json& doc, const ModelConfig& m, const std::string& origin) {
  static const std::pair<const char*, const char*> kCounts[] = {
      {"num_local_experts", "mixtral"}, {"n_routed_experts", "deepseek"}, {"num_experts", "qwen"}};
  Experts e;
  std::string count_key;
  for (const auto& [key, family] : kCounts) {
    if (!is_set(doc, key)) continue;
    if (!count_key.empty())
      throw BadInput(
          fmt::format("config '{}': keys '{}' and '{}' both count experts; keep the one of your model's "
                      "family",
                      origin, count_key, key));
    count_key = key;
    e.family = family;
    e.routed = whole_number(doc.at(key), key, origin);
  }
  if (count_key.empty()) return e;
  e.per_token = optional_count(doc, "num_experts_per_tok", origin, 0, 1);
  if (e.per_token > e.routed)
    throw BadInput(fmt::format("config '{}': num_experts_per_tok {} is more than the {} experts of '{}'", origin,
                               e.per_token, e.routed, count_key));
  if (e.family == "mixtral") {
    e.width = m.intermediate;  // each expert is a full-width MLP
    e.moe_layers = m.layers;
  } else if (e.family == "deepseek") {
    e.width = optional_count(doc, "moe_intermediate_size", origin, 0, 1);
    e.shared = optional_count(doc, "n_shared_experts", origin, 0, 0);
    const std::int64_t first_moe = optional_count(doc, "first_k_dense_replace", origin, 0, 0);
    const std::int64_t every = optional_count(doc, "moe_layer_freq", origin, 1, 1);
    // Layer i is routed when i >= first_k_dense_replace and i % moe_layer_freq == 0 (DeepseekV3DecoderLayer).
    e.moe_layers = first_moe >= m.layers ? 0 : multiples_below(m.layers, every) - multiples_below(first_moe, every);
    e.router_bias = optional_text(doc, "topk_method") == "noaux_tc";
  } else {  // qwen
    e.width = optional_count(doc, "moe_intermediate_size", origin, 0, 1);
    e.shared_width = optional_count(doc, "shared_expert_intermediate_size", origin, 0, 0);
    const std::int64_t step = optional_count(doc, "decoder_sparse_step", origin, 1, 1);
    // Layer i is routed when (i + 1) % decoder_sparse_step == 0 and i is not in mlp_only_layers.
    e.moe_layers = m.layers / step;
    if (present(doc, "mlp_only_layers")) {
      const auto& dense = doc.at("mlp_only_layers");
      if (!dense.is_array())
        throw BadInput(fmt::format("config '{}': key 'mlp_only_layers' must be a list of layer numbers, got {}", origin,
                                   describe_json_value(dense)));
      std::set<std::int64_t> listed;
      for (const auto& layer : dense) {
        const std::int64_t i = whole_number(layer, "mlp_only_layers", origin, 0);
        if (i >= m.layers)
          throw BadInput(fmt::format("config '{}': key 'mlp_only_layers' names layer {}; layers are 0 to {}", origin, i,
                                     m.layers - 1));
        if (listed.insert(i).second && (i + 1) % step == 0) --e.moe_layers;
      }
    }
  }
  return e;
}

// Model types whose configuration class this count knows: their default for tie_word_embeddings (Hugging Face
// transformers' <Family>Config defaults) and the extra terms of their layout.
struct FamilyFacts {
  const char* model_type;
  bool tied_by_default;
  int norms_per_layer;
  bool qk_norm;
  bool qkv_bias;
};
constexpr FamilyFacts kFamilies[] = {
    {"llama", false, 2, false, false},       {"mistral", false, 2, false, false},
    {"mixtral", false, 2, false, false},     {"phi3", false, 2, false, false},
    {"qwen2", false, 2, false, true},        {"qwen2_moe", false, 2, false, true},
    {"qwen3", false, 2, true, false},        {"qwen3_moe", false, 2, true, false},
    {"deepseek_v2", false, 2, false, false}, {"deepseek_v3", false, 2, false, false},
    {"gemma", true, 2, false, false},        {"gemma2", true, 4, false, false},
    {"gemma3_text", true, 4, true, false},   {"gpt2", true, 2, false, false},
};

const FamilyFacts* find_family(const std::string& model_type) {
  for (const FamilyFacts& f : kFamilies)
    if (model_type == f.model_type) return &f;
  return nullptr;
}

void read_attention(const nlohmann::json& doc, ModelConfig& m, const std::string& origin) {
  if (is_set(doc, "kv_lora_rank")) {
    m.attention = AttentionKind::Latent;
    m.latent.kv_lora_rank = whole_number(doc.at("kv_lora_rank"), "kv_lora_rank", origin);
    if (!present(doc, "qk_rope_head_dim"))
      throw BadInput(
          fmt::format("config '{}': missing key 'qk_rope_head_dim' (multi-head latent attention caches "
                      "the rotary key beside the kv_lora_rank latent)",
                      origin));
    m.latent.qk_rope_head_dim = whole_number(doc.at("qk_rope_head_dim"), "qk_rope_head_dim", origin);
    m.latent.qk_nope_head_dim = optional_count(doc, "qk_nope_head_dim", origin, 0, 1);
    m.latent.v_head_dim = optional_count(doc, "v_head_dim", origin, 0, 1);
    m.latent.q_lora_rank = optional_count(doc, "q_lora_rank", origin, 0, 0);
    m.kv_heads = m.heads;  // every head has its own key and value once the latent is expanded
    m.head_dim = m.latent.qk_nope_head_dim > 0
                     ? add(m.latent.qk_nope_head_dim, m.latent.qk_rope_head_dim, "qk_nope_head_dim + qk_rope_head_dim")
                     : 0;
    return;
  }
  static constexpr std::initializer_list<const char*> kKvHeads = {"num_key_value_heads", "num_kv_heads", "n_head_kv"};
  const SizeKey kv = read_size(doc, kKvHeads, origin, true);
  if (!kv.key.empty()) {
    m.kv_heads = kv.value;
    if (kv.key != "num_key_value_heads") m.other_spellings.push_back(kv.key);
  } else if (optional_flag(doc, "multi_query_attention", origin, false) && present(doc, "multi_query_group_num")) {
    m.kv_heads = whole_number(doc.at("multi_query_group_num"), "multi_query_group_num", origin);  // ChatGLM
    m.other_spellings.push_back("multi_query_group_num");
  } else if (optional_flag(doc, "multi_query", origin, false)) {
    m.kv_heads = 1;  // Falcon-7B: one key and value head shared by all query heads
    m.other_spellings.push_back("multi_query");
  } else {
    m.kv_heads = m.heads;
  }
  if (m.heads % m.kv_heads != 0)
    throw BadInput(fmt::format("config '{}': num_attention_heads {} is not a multiple of num_key_value_heads {}",
                               origin, m.heads, m.kv_heads));
  static constexpr std::initializer_list<const char*> kHeadDim = {"head_dim", "kv_channels"};
  const SizeKey head_dim = read_size(doc, kHeadDim, origin, true);
  if (!head_dim.key.empty()) {
    m.head_dim = head_dim.value;
    if (head_dim.key != "head_dim") m.other_spellings.push_back(head_dim.key);
    return;
  }
  if (m.hidden == 0)
    throw BadInput(
        fmt::format("config '{}': no head_dim and no hidden_size to derive it from; add 'head_dim'", origin));
  if (m.hidden % m.heads != 0)
    throw BadInput(
        fmt::format("config '{}': no head_dim, and hidden_size {} is not a multiple of "
                    "num_attention_heads {}; add 'head_dim'",
                    origin, m.hidden, m.heads));
  m.head_dim = m.hidden / m.heads;
}

// The sliding window, if the file turns one on.
void read_window(const nlohmann::json& doc, ModelConfig& m, const std::string& origin) {
  if (optional_flag(doc, "use_sliding_window", origin, true))
    m.sliding_window = optional_count(doc, "sliding_window", origin, 0, 1);
}

void read_embeddings_tying(const nlohmann::json& doc, ModelConfig& m, const std::string& origin) {
  const FamilyFacts* family = find_family(m.model_type);
  if (m.layout == Layout::Gpt2) {
    m.tied_embeddings = true;  // GPT2LMHeadModel always reuses the token embeddings as its output layer
    m.tied_embeddings_basis = "GPT-2's output layer is its token embedding matrix";
    return;
  }
  if (present(doc, "tie_word_embeddings")) {
    if (!doc.at("tie_word_embeddings").is_boolean())
      throw BadInput(fmt::format("config '{}': key 'tie_word_embeddings' must be true or false, got {}", origin,
                                 describe_json_value(doc.at("tie_word_embeddings"))));
    m.tied_embeddings = doc.at("tie_word_embeddings").get<bool>();
    m.tied_embeddings_basis = fmt::format("tie_word_embeddings: {} in the file", m.tied_embeddings);
  } else if (family != nullptr) {
    m.tied_embeddings = family->tied_by_default;
    m.tied_embeddings_basis = fmt::format("not in the file: model type '{}' defaults to {}", m.model_type,
                                          m.tied_embeddings ? "tied" : "untied");
  } else {
    m.tied_embeddings = false;
    m.tied_embeddings_basis =
        m.model_type.empty()
            ? "not in the file, and no model_type: taken as untied (add tie_word_embeddings to be sure)"
            : fmt::format(
                  "not in the file, and model type '{}' has no default known here: taken as untied (add "
                  "tie_word_embeddings to be sure)",
                  m.model_type);
  }
}

// The layout the parameter count follows, the terms some families add, and what it cannot count without.
void read_layout(const nlohmann::json& doc, ModelConfig& m, const std::string& origin) {
  const FamilyFacts* family = find_family(m.model_type);
  if (m.model_type == "gpt2") {
    m.layout = Layout::Gpt2;
    if (m.intermediate == 0 && m.hidden > 0)
      m.intermediate = multiply(4, m.hidden, "n_inner (4 x n_embd)");  // GPT2Config: n_inner null means 4 x n_embd
  }
  if (family != nullptr) {
    m.norms_per_layer = family->norms_per_layer;
    m.qk_norm = family->qk_norm;
    m.qkv_bias = family->qkv_bias;
  }
  m.attention_bias = optional_flag(doc, "attention_bias", origin, false);
  m.mlp_bias = optional_flag(doc, "mlp_bias", origin, false);
  read_embeddings_tying(doc, m, origin);

  auto need = [&](bool missing, const char* key) {
    if (missing) m.weights_missing.emplace_back(key);
  };
  need(m.hidden == 0, "hidden_size");
  const bool dense_mlps = m.experts.moe_layers < m.layers;
  need(m.intermediate == 0 && (dense_mlps || m.experts.family == "mixtral"), "intermediate_size");
  need(m.experts.any() && m.experts.family != "mixtral" && m.experts.width == 0, "moe_intermediate_size");
  need(m.vocab == 0, "vocab_size");
  need(m.attention == AttentionKind::Latent && m.latent.qk_nope_head_dim == 0, "qk_nope_head_dim");
  need(m.attention == AttentionKind::Latent && m.latent.v_head_dim == 0, "v_head_dim");
  need(m.layout == Layout::Gpt2 && m.max_positions == 0, "n_positions");

  if (m.layout == Layout::Gpt2)
    m.layout_note = "GPT-2 layout: learned positions, LayerNorm, a two-matrix MLP, biases";
  else if (family != nullptr)
    m.layout_note = fmt::format("{} layout of model type '{}'", m.experts.any() ? "mixture-of-experts" : "Llama-style",
                                m.model_type);
  else
    m.layout_note =
        fmt::format("{}: counted as a Llama-style decoder (gated MLP, RMSNorm, no biases), an assumption",
                    m.model_type.empty() ? std::string("no model_type")
                                         : fmt::format("model type '{}' is not one this count knows", m.model_type));
}

// "llama-2-7b" before "llama-2-13b": runs of digits compare as numbers, so families list from small to large.
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit((unsigned char)a[i]) && std::isdigit((unsigned char)b[j])) {
      std::size_t i_end = i, j_end = j;
      while (i_end < a.size() && std::isdigit((unsigned char)a[i_end])) ++i_end;
      while (j_end < b.size() && std::isdigit((unsigned char)b[j_end])) ++j_end;
      const std::string_view x(a.data() + i, i_end - i), y(b.data() + j, j_end - j);
      if (x.size() != y.size()) return x.size() < y.size();  // no leading zeros in preset names
      if (x != y) return x < y;
      i = i_end;
      j = j_end;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

}  // namespace

ModelConfig parse_model_config(std::string_view json_text, const std::string& origin) {
  const nlohmann::json doc = parse_json_input(json_text, fmt::format("config '{}'", origin));
  if (!doc.is_object()) throw BadInput(fmt::format("config '{}': expected a JSON object {{...}} at line 1", origin));

  ModelConfig m;
  m.name = origin;
  m.source = optional_text(doc, "_source");
  m.nominal_parameters = optional_text(doc, "_nominal_parameters");
  m.model_type = optional_text(doc, "model_type");
  // The sizes the cache needs are required; each may be spelled as another family spells it.
  auto required_size = [&](std::initializer_list<const char*> spellings) {
    const SizeKey found = read_size(doc, spellings, origin, true);
    if (found.key.empty())
      throw BadInput(fmt::format("config '{}': missing key '{}' (a Hugging Face config.json has it; also read as: {})",
                                 origin, *spellings.begin(), other_spellings_phrase(spellings)));
    if (found.key != *spellings.begin()) m.other_spellings.push_back(found.key);
    return found.value;
  };
  auto optional_size = [&](std::initializer_list<const char*> spellings, bool agree) {
    const SizeKey found = read_size(doc, spellings, origin, agree);
    if (!found.key.empty() && found.key != *spellings.begin()) m.other_spellings.push_back(found.key);
    return found.value;
  };
  m.layers = required_size({"num_hidden_layers", "n_layer", "n_layers", "num_layers"});
  m.heads = required_size({"num_attention_heads", "n_head", "n_heads", "num_heads"});
  m.hidden = optional_size({"hidden_size", "n_embd", "d_model"}, true);
  m.intermediate = optional_size({"intermediate_size", "n_inner", "ffn_hidden_size"}, true);
  m.vocab = optional_size({"vocab_size", "padded_vocab_size"}, false);  // ChatGLM's padded size is the matrix's
  // Some files give the trained length under two names that differ (a training length and a limit): the first wins.
  m.max_positions =
      optional_size({"max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "n_ctx"}, false);
  read_attention(doc, m, origin);
  read_window(doc, m, origin);
  refuse_unmodelled_keys(doc, origin);
  m.window_layers = window_layer_count(doc, m, origin);
  m.experts = read_experts(doc, m, origin);
  read_layout(doc, m, origin);
  count_parameters(m);  // a config whose parameter count overflows is refused here, once
  return m;
}

ModelConfig load_model_config_file(const std::string& path) {
  ModelConfig model =
      parse_model_config(read_input_file(path, "parameter 'config'"), path);  // errors name the whole path
  model.name = std::filesystem::path(path).filename().string();               // titles and tables name the file
  return model;
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const auto& a : embedded_assets()) {
    if (a.name.starts_with(kPresetFolder) && a.name.ends_with(kPresetSuffix))
      names.emplace_back(
          a.name.substr(kPresetFolder.size(), a.name.size() - kPresetFolder.size() - kPresetSuffix.size()));
  }
  std::sort(names.begin(), names.end(), natural_less);
  return names;
}

ModelConfig load_preset(const std::string& name) {
  const auto names = preset_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    std::string known;
    for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
    throw BadInput(fmt::format("parameter 'model': unknown model '{}'; presets: {}", name, known));
  }
  ModelConfig m = parse_model_config(asset(std::string(kPresetFolder) + name + std::string(kPresetSuffix)), name);
  m.name = name;
  return m;
}

}  // namespace dlsys::kvcache
