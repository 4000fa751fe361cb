#include "lessons/kvcache/model_notes.h"

#include <fmt/format.h>

#include "engine/units.h"
#include "lessons/kvcache/parameter_count.h"

namespace dlsys::kvcache {

std::string attention_kind_name(const ModelConfig& m) {
  if (m.attention == AttentionKind::Latent) return "latent";
  if (m.kv_heads == m.heads) return "multi-head";
  return m.kv_heads == 1 ? "multi-query" : "grouped-query";
}

std::vector<std::string> figures_not_computed(const ModelConfig& m) {
  std::vector<std::string> figures;
  if (!m.weights_missing.empty())
    figures = {"weights", "total", "fit", "decode intensity"};
  else if (m.experts.any() && m.experts.per_token == 0)
    figures = {"active parameters", "decode intensity"};
  return figures;
}

std::vector<ModelNote> model_notes(const ModelConfig& m) {
  std::vector<ModelNote> notes;
  if (!m.weights_missing.empty())
    notes.push_back({fmt::format("not computed: the weights, the total and what fits (the config has no {}); the KV "
                                 "cache needs none of them",
                                 missing_keys_phrase(m)),
                     true, true});
  std::int64_t query_width = 0;
  const bool overflows = __builtin_mul_overflow(m.heads, m.head_dim, &query_width);
  if (m.attention == AttentionKind::Standard && m.hidden > 0 && !overflows && query_width != m.hidden)
    notes.push_back({fmt::format("{} heads x head_dim {} = {}, not hidden_size {}: the two are often equal, not "
                                 "always, so head_dim is taken from the config",
                                 m.heads, m.head_dim, query_width, m.hidden),
                     false});
  if (m.experts.any()) {
    const Experts& e = m.experts;
    std::string shared;
    if (e.shared > 0) shared = fmt::format(" and {} shared", e.shared);
    if (e.shared_width > 0) shared = " and a shared one";
    notes.push_back({fmt::format("mixture of experts: {} routed experts{} in {} of {} layers, {}", e.routed, shared,
                                 e.moe_layers, m.layers,
                                 e.per_token > 0 ? fmt::format("{} per token", e.per_token)
                                                 : std::string("experts per token not in the config (no "
                                                               "num_experts_per_tok): active parameters not computed")),
                     true, e.per_token == 0});
  }
  if (m.weights_missing.empty()) {
    notes.push_back({fmt::format("output layer {} the embeddings ({})", m.tied_embeddings ? "tied to" : "separate from",
                                 m.tied_embeddings_basis),
                     true});
    notes.push_back({"parameters: " + m.layout_note, true});
  }
  if (!m.other_spellings.empty()) {
    std::string keys;
    for (const std::string& key : m.other_spellings) keys += (keys.empty() ? "" : ", ") + key;
    notes.push_back({"read under other families' key names: " + keys, false});
  }
  return notes;
}

std::string longest_context_phrase(std::int64_t usable, std::int64_t memory_allows, const std::string& limited_by,
                                   std::int64_t max_positions) {
  auto count = [](std::int64_t n) { return format_count(double(n)); };
  if (limited_by == "max_position_embeddings")
    return fmt::format(
        "{} tokens: its config allows {} positions; memory alone would allow {}", count(usable), count(max_positions),
        memory_allows < 0 ? std::string("any length (the sliding window caps the cache)") : count(memory_allows));
  if (limited_by == "the sliding window") return "any length: the sliding window caps the cache";
  if (usable == 0) return "none: no room is left beside the weights and the workspace";
  return fmt::format("{} tokens, as memory allows{}", count(usable),
                     max_positions > 0 ? fmt::format(" (its config allows {})", count(max_positions)) : "");
}

}  // namespace dlsys::kvcache
