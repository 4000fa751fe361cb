#include "lessons/kvcache/model_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/assets.h"
#include "engine/errors.h"
#include "engine/file_io.h"
#include "engine/json_io.h"
#include "lessons/kvcache/checked_math.h"

namespace dlsys::kvcache {

namespace {

constexpr std::string_view kPresetFolder = "models/";
constexpr std::string_view kPresetSuffix = ".json";

// A value that must be a whole number >= 1: layers, heads, sizes.
std::int64_t positive_integer(const nlohmann::json& value, const std::string& key, const std::string& origin) {
  if (value.is_number_unsigned() && value.get<std::uint64_t>() > std::uint64_t(INT64_MAX))
    throw BadInput(
        fmt::format("config '{}': key '{}' = {} does not fit in 64 bits", origin, key, describe_json_value(value)));
  if (!value.is_number_integer())
    throw BadInput(
        fmt::format("config '{}': key '{}' must be a whole number, got {}", origin, key, describe_json_value(value)));
  const std::int64_t n = value.get<std::int64_t>();
  if (n < 1) throw BadInput(fmt::format("config '{}': key '{}' must be at least 1, got {}", origin, key, n));
  return n;
}

std::int64_t required(const nlohmann::json& doc, const char* key, const std::string& origin) {
  if (!doc.contains(key) || doc.at(key).is_null())
    throw BadInput(fmt::format("config '{}': missing key '{}' (a Hugging Face config.json has it)", origin, key));
  return positive_integer(doc.at(key), key, origin);
}

std::int64_t optional(const nlohmann::json& doc, const char* key, const std::string& origin, std::int64_t fallback) {
  if (!doc.contains(key) || doc.at(key).is_null()) return fallback;
  return positive_integer(doc.at(key), key, origin);
}

std::string optional_text(const nlohmann::json& doc, const char* key) {
  return doc.contains(key) && doc.at(key).is_string() ? doc.at(key).get<std::string>() : std::string();
}

// Present and meaning something: null, false and 0 are how configs say a feature is off.
bool is_set(const nlohmann::json& doc, const char* key) {
  if (!doc.contains(key)) return false;
  const auto& v = doc.at(key);
  return !(v.is_null() || (v.is_boolean() && !v.get<bool>()) || (v.is_number() && v.get<double>() == 0));
}

// Keys of model families whose cache this sizing does not compute: refusing them is better than a wrong size.
void refuse_unmodelled_keys(const nlohmann::json& doc, const std::string& origin) {
  static const std::pair<const char*, const char*> kUnmodelled[] = {
      {"num_experts", "mixture of experts"},
      {"num_local_experts", "mixture of experts"},
      {"n_routed_experts", "mixture of experts"},
      {"n_shared_experts", "mixture of experts"},
      {"moe_intermediate_size", "mixture of experts"},
      {"kv_lora_rank", "multi-head latent attention (a compressed KV cache)"},
      {"q_lora_rank", "multi-head latent attention (a compressed KV cache)"},
      {"attention_chunk_size", "chunked attention"},
      {"num_kv_shared_layers", "layers that share another layer's KV cache"},
  };
  for (const auto& [key, what] : kUnmodelled)
    if (is_set(doc, key))
      throw BadInput(
          fmt::format("config '{}': key '{}' ({}) is not modelled by this sizing; allowed: dense "
                      "decoders (Llama, Mistral, Gemma, Qwen2 style) without it",
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
    const std::int64_t pattern = positive_integer(doc.at("sliding_window_pattern"), "sliding_window_pattern", origin);
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
  m.layers = required(doc, "num_hidden_layers", origin);
  m.heads = required(doc, "num_attention_heads", origin);
  m.hidden = required(doc, "hidden_size", origin);
  m.intermediate = required(doc, "intermediate_size", origin);
  m.vocab = required(doc, "vocab_size", origin);
  m.kv_heads = optional(doc, "num_key_value_heads", origin, m.heads);
  if (m.heads % m.kv_heads != 0)
    throw BadInput(fmt::format("config '{}': num_attention_heads {} is not a multiple of num_key_value_heads {}",
                               origin, m.heads, m.kv_heads));
  if (doc.contains("head_dim") && !doc.at("head_dim").is_null()) {
    m.head_dim = positive_integer(doc.at("head_dim"), "head_dim", origin);
  } else {
    if (m.hidden % m.heads != 0)
      throw BadInput(
          fmt::format("config '{}': no head_dim, and hidden_size {} is not a multiple of "
                      "num_attention_heads {}; add 'head_dim'",
                      origin, m.hidden, m.heads));
    m.head_dim = m.hidden / m.heads;
  }
  m.max_positions = optional(doc, "max_position_embeddings", origin, 0);
  bool window_enabled = true;
  if (doc.contains("use_sliding_window") && !doc.at("use_sliding_window").is_null()) {
    // "false" as a string would otherwise read as a window that is on.
    if (!doc.at("use_sliding_window").is_boolean())
      throw BadInput(fmt::format("config '{}': key 'use_sliding_window' must be true or false (without quotes), got {}",
                                 origin, describe_json_value(doc.at("use_sliding_window"))));
    window_enabled = doc.at("use_sliding_window").get<bool>();
  }
  if (window_enabled) m.sliding_window = optional(doc, "sliding_window", origin, 0);
  refuse_unmodelled_keys(doc, origin);
  m.window_layers = window_layer_count(doc, m, origin);
  if (doc.contains("tie_word_embeddings")) {
    if (!doc.at("tie_word_embeddings").is_boolean())
      throw BadInput(fmt::format("config '{}': key 'tie_word_embeddings' must be true or false, got {}", origin,
                                 describe_json_value(doc.at("tie_word_embeddings"))));
    m.tied_embeddings = doc.at("tie_word_embeddings").get<bool>();
  }
  parameter_count(m);  // a config whose parameter count overflows is refused here, once
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

std::int64_t parameter_count(const ModelConfig& m) {
  const std::string what = fmt::format("the parameter count of '{}'", m.name);
  const std::int64_t q_width = multiply(m.heads, m.head_dim, what);
  const std::int64_t kv_width = multiply(m.kv_heads, m.head_dim, what);
  // Per layer: q and o are hidden x (heads x head_dim); k and v are hidden x (kv_heads x head_dim).
  const std::int64_t attention = add(multiply(2, multiply(m.hidden, q_width, what), what),
                                     multiply(2, multiply(m.hidden, kv_width, what), what), what);
  const std::int64_t mlp = multiply(3, multiply(m.hidden, m.intermediate, what), what);  // gate, up, down
  const std::int64_t norms = multiply(2, m.hidden, what);
  const std::int64_t per_layer = add(add(attention, mlp, what), norms, what);
  const std::int64_t embedding = multiply(m.vocab, m.hidden, what);
  const std::int64_t output = m.tied_embeddings ? 0 : embedding;
  return add(add(add(multiply(m.layers, per_layer, what), embedding, what), output, what), m.hidden, what);
}

}  // namespace dlsys::kvcache
