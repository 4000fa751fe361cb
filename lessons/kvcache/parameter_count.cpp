#include "lessons/kvcache/parameter_count.h"

#include <fmt/format.h>

#include "engine/errors.h"
#include "lessons/kvcache/checked_math.h"

namespace dlsys::kvcache {

namespace {

// Overflow-checked sums and products, each naming what it counts.
struct Counter {
  std::string what;
  std::int64_t mul(std::int64_t a, std::int64_t b) const { return multiply(a, b, what); }
  std::int64_t mul(std::int64_t a, std::int64_t b, std::int64_t c) const { return mul(mul(a, b), c); }
  std::int64_t sum(std::initializer_list<std::int64_t> terms) const {
    std::int64_t total = 0;
    for (std::int64_t t : terms) total = add(total, t, what);
    return total;
  }
};

// GPT-2 (GPT2LMHeadModel): token and position tables; per layer ln_1, c_attn (d x 3d + 3d), attention c_proj
// (d x d + d), ln_2, mlp c_fc (d x inner + inner), mlp c_proj (inner x d + d); a final ln_f. LayerNorms have a
// weight and a bias. The output layer is the token table.
ParameterCount count_gpt2(const ModelConfig& m, const Counter& c) {
  const std::int64_t d = m.hidden, inner = m.intermediate;
  const std::int64_t per_layer = c.sum({c.mul(2, d), c.mul(d, 3, d), c.mul(3, d), c.mul(d, d), d, c.mul(2, d),
                                        c.mul(d, inner), inner, c.mul(inner, d), d});
  const std::int64_t tokens = c.mul(m.vocab, d), positions = c.mul(m.max_positions, d);
  ParameterCount p;
  p.total = c.sum({tokens, positions, c.mul(m.layers, per_layer), c.mul(2, d)});
  p.lookup_only = positions;
  p.active = p.total - positions;
  return p;
}

// One layer's attention projections (and their biases and norms).
std::int64_t attention_parameters(const ModelConfig& m, const Counter& c) {
  const std::int64_t h = m.hidden;
  if (m.attention == AttentionKind::Latent) {
    // DeepseekV3Attention: queries through a low-rank q_a (with its norm) then q_b, or straight from the hidden
    // state; kv_a makes the latent and the rotary key, kv_b expands the latent to every head's key and value.
    const LatentAttention& a = m.latent;
    const std::int64_t q_head = c.sum({a.qk_nope_head_dim, a.qk_rope_head_dim});
    const std::int64_t latent_and_rope = c.sum({a.kv_lora_rank, a.qk_rope_head_dim});
    const std::int64_t query =
        a.q_lora_rank > 0 ? c.sum({c.mul(h, a.q_lora_rank), a.q_lora_rank, c.mul(a.q_lora_rank, m.heads, q_head)})
                          : c.mul(h, m.heads, q_head);
    const std::int64_t kv_a = c.sum({c.mul(h, latent_and_rope), a.kv_lora_rank});
    const std::int64_t kv_b = c.mul(a.kv_lora_rank, m.heads, c.sum({a.qk_nope_head_dim, a.v_head_dim}));
    const std::int64_t out = c.mul(m.heads, a.v_head_dim, h);
    // attention_bias puts biases on q_a, kv_a and o (q without a low rank has none).
    const std::int64_t biases = m.attention_bias ? c.sum({a.q_lora_rank, latent_and_rope, h}) : 0;
    return c.sum({query, kv_a, kv_b, out, biases});
  }
  const std::int64_t q_width = c.mul(m.heads, m.head_dim), kv_width = c.mul(m.kv_heads, m.head_dim);
  // q and o are hidden x (heads x head_dim); k and v are hidden x (kv_heads x head_dim).
  const std::int64_t matrices = c.sum({c.mul(2, h, q_width), c.mul(2, h, kv_width)});
  std::int64_t biases = 0;
  if (m.attention_bias)
    biases = c.sum({q_width, c.mul(2, kv_width), h});
  else if (m.qkv_bias)
    biases = c.sum({q_width, c.mul(2, kv_width)});
  const std::int64_t qk_norms = m.qk_norm ? c.mul(2, m.head_dim) : 0;
  return c.sum({matrices, biases, qk_norms});
}

// A gated MLP (gate, up, down) of the given width.
std::int64_t gated_mlp(const ModelConfig& m, std::int64_t width, const Counter& c) {
  return c.sum({c.mul(3, m.hidden, width), m.mlp_bias ? c.sum({c.mul(2, width), m.hidden}) : 0});
}

ParameterCount count_llama_style(const ModelConfig& m, const Counter& c) {
  const Experts& e = m.experts;
  const std::int64_t h = m.hidden;
  const std::int64_t per_layer = c.sum({attention_parameters(m, c), c.mul(m.norms_per_layer, h)});
  const std::int64_t dense_layers = m.layers - e.moe_layers;
  const std::int64_t dense_mlp = dense_layers > 0 ? gated_mlp(m, m.intermediate, c) : 0;
  ParameterCount p;
  std::int64_t routed_layer = 0;
  if (e.any()) {
    p.routed_expert = gated_mlp(m, e.width, c);
    p.routed_layers = e.moe_layers;
    p.routed_experts = e.routed;
    // DeepSeek's shared experts form one MLP of n_shared x moe_intermediate_size; Qwen2-MoE's shared expert has a
    // gate of its own (hidden -> 1). The router is hidden -> experts, with a bias per expert under noaux_tc.
    const std::int64_t shared = e.shared > 0         ? gated_mlp(m, c.mul(e.shared, e.width), c)
                                : e.shared_width > 0 ? c.sum({gated_mlp(m, e.shared_width, c), h})
                                                     : 0;
    routed_layer = c.sum({c.mul(e.routed, p.routed_expert), shared, c.mul(h, e.routed), e.router_bias ? e.routed : 0});
  }
  const std::int64_t embedding = c.mul(m.vocab, h);
  const std::int64_t output = m.tied_embeddings ? 0 : embedding;
  p.total = c.sum({c.mul(m.layers, per_layer), c.mul(dense_layers, dense_mlp), c.mul(e.moe_layers, routed_layer),
                   embedding, output, h});
  p.lookup_only = m.tied_embeddings ? 0 : embedding;
  p.active_known = !e.any() || e.per_token > 0;
  const std::int64_t unused_experts =
      e.any() && p.active_known ? c.mul(e.moe_layers, e.routed - e.per_token, p.routed_expert) : 0;
  p.active = p.active_known ? p.total - p.lookup_only - unused_experts : 0;
  return p;
}

}  // namespace

std::optional<ParameterCount> count_parameters(const ModelConfig& m) {
  if (!m.weights_missing.empty()) return std::nullopt;
  const Counter counter{fmt::format("the parameter count of '{}'", m.name)};
  return m.layout == Layout::Gpt2 ? count_gpt2(m, counter) : count_llama_style(m, counter);
}

std::string missing_keys_phrase(const ModelConfig& m) {
  std::string out;
  for (std::size_t i = 0; i < m.weights_missing.size(); ++i)
    out += (i == 0 ? "" : i + 1 == m.weights_missing.size() ? " and " : ", ") + m.weights_missing[i];
  return out;
}

std::int64_t parameter_count(const ModelConfig& m) {
  const auto count = count_parameters(m);
  if (!count)
    throw BadInput(
        fmt::format("the weights of '{}' cannot be counted: the config has no {}", m.name, missing_keys_phrase(m)));
  return count->total;
}

}  // namespace dlsys::kvcache
