#pragma once
// Sentences about how a config was read, shown on screen and printed by the CLI alike: defaults it relied on,
// assumptions of the parameter count, other families' key names, what could not be computed and why, and where
// heads x head_dim departs from hidden_size.
#include <cstdint>
#include <string>
#include <vector>

#include "lessons/kvcache/model_config.h"

namespace dlsys::kvcache {

// "multi-head", "grouped-query", "multi-query" or "latent".
std::string attention_kind_name(const ModelConfig& model);
// The figures a config without the weights' sizes leaves out, as named in the JSON's "not_computed".
std::vector<std::string> figures_not_computed(const ModelConfig& model);
struct ModelNote {
  std::string text;
  bool about_weights = false;  // the weights' count and what depends on it, rather than the cache's shape
  bool leaves_out = false;     // says that figures could not be computed: shown so it is not missed
};
std::vector<ModelNote> model_notes(const ModelConfig& model);

// The longest context in words: "4,096 tokens: its config allows 4,096 positions; memory alone would allow
// 124,975", "15,621 tokens, as memory allows (its config allows 32,768)", or "any length: ...".
std::string longest_context_phrase(std::int64_t usable, std::int64_t memory_allows, const std::string& limited_by,
                                   std::int64_t max_positions);

}  // namespace dlsys::kvcache
