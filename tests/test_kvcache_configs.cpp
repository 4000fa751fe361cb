// config.json files of other families: mixture-of-experts weights and active parameters (Mixtral, DeepSeek, Qwen),
// multi-head latent attention's cache (DeepSeek-V3), GPT-2's key spellings, the model type's default for tied
// embeddings, and files without the sizes the weights need. Every expected number is worked out here by hand from
// the published config.json it names.
#include <doctest/doctest.h>

#include <string>

#include "engine/errors.h"
#include "lessons/kvcache/kv_theory.h"
#include "lessons/kvcache/model_config.h"
#include "lessons/kvcache/model_notes.h"
#include "lessons/kvcache/parameter_count.h"

using namespace dlsys;
using namespace dlsys::kvcache;

namespace {

SizingQuery sized(const ModelConfig& model, const std::string& kv_type, std::int64_t batch, std::int64_t seq) {
  SizingQuery q;
  q.model = model;
  q.kv_type = find_element_type(kv_type, "dtype");
  q.weights_type = find_element_type("bf16", "weights_dtype");
  q.batch = batch;
  q.seq = seq;
  q.gpu_bytes = 80'000'000'000;
  return q;
}

bool has_note(const ModelConfig& model, const std::string& words) {
  for (const ModelNote& note : model_notes(model))
    if (note.text.find(words) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("DeepSeek-V3's latent attention caches (512 + 64) x 61 layers elements per token") {
  const ModelConfig m = load_preset("deepseek-v3");
  CHECK(m.attention == AttentionKind::Latent);
  CHECK(attention_kind_name(m) == "latent");
  const Sizing s = size_inference(sized(m, "bf16", 1, 4096));
  CHECK(s.cache_elements_per_layer_token == 512 + 64);
  CHECK(s.bytes_per_token == (512 + 64) * 61 * 2);  // 70,272 bytes: the latent and the rotary key, no factor 2
  CHECK(s.kv_bytes == 70'272LL * 4096);
  // Expanded, every one of the 128 heads would keep a key of 128 + 64 and a value of 128 elements per layer.
  CHECK(s.per_head_kv_bytes == 61LL * 128 * (128 + 64 + 128) * 2 * 4096);
  CHECK(kv_bytes_per_token(m, find_element_type("fp8", "dtype")) == (512 + 64) * 61);
}

TEST_CASE("DeepSeek-V3: 671B parameters, 36.6B of them used per token, from the config by hand") {
  const ModelConfig m = load_preset("deepseek-v3");
  CHECK(m.experts.family == "deepseek");
  CHECK(m.experts.moe_layers == 61 - 3);  // first_k_dense_replace 3, moe_layer_freq 1
  const std::int64_t h = 7168, heads = 128;
  const std::int64_t attention = h * 1536 + 1536 + 1536 * heads * (128 + 64)         // q_a, its norm, q_b
                                 + h * (512 + 64) + 512 + 512 * heads * (128 + 128)  // kv_a, its norm, kv_b
                                 + heads * 128 * h;                                  // o
  const std::int64_t expert = 3 * h * 2048;                                          // gate, up, down
  const std::int64_t routed_layer = 256 * expert + 1 * expert + 256 * h + 256;       // routed, shared, router, its bias
  const std::int64_t embedding = 129'280 * h;
  const std::int64_t total = 61 * (attention + 2 * h) + 3 * (3 * h * 18'432) + 58 * routed_layer + 2 * embedding + h;
  const auto count = count_parameters(m);
  REQUIRE(count.has_value());
  CHECK(count->total == total);
  CHECK(count->total == 671'026'419'200);  // "671B total parameters" (technical report, abstract)
  // Active: without the input embedding and the 248 routed experts a token skips in each routed layer. DeepSeek's
  // weights notes give 36.6B on the same convention (37B in the abstract counts the input embedding as well).
  CHECK(count->active == total - embedding - 58 * (256 - 8) * expert);
  CHECK(count->active == 36'625'618'432);
}

TEST_CASE("Mixtral-8x7B: eight full-width experts per layer, two per token") {
  const ModelConfig m = load_preset("mixtral-8x7b");
  CHECK(m.experts.family == "mixtral");
  CHECK(m.experts.width == 14'336);
  const std::int64_t h = 4096, expert = 3 * h * 14'336;
  const std::int64_t per_layer = 2 * h * (32 * 128) + 2 * h * (8 * 128) + 2 * h + 8 * expert + 8 * h;
  const std::int64_t embedding = 32'000 * h;
  const auto count = count_parameters(m);
  REQUIRE(count.has_value());
  CHECK(count->total == 32 * per_layer + 2 * embedding + h);
  CHECK(count->total == 46'702'792'704);                               // "47B" (Mixtral paper, abstract)
  CHECK(count->active == count->total - embedding - 32 * 6 * expert);  // 12,748,853,248: "13B active"
  CHECK(count->active == 12'748'853'248);
  CHECK(kv_bytes_per_token(m, find_element_type("fp16", "dtype")) == 2 * 32 * 8 * 128 * 2);
  CHECK(m.sliding_window == 0);  // the published file sets sliding_window to null
}

TEST_CASE("experts: DeepSeek's dense first layers and layer frequency, Qwen's sparse step and dense list") {
  const ModelConfig deepseek = parse_model_config(R"({"num_hidden_layers": 10, "num_attention_heads": 2,
    "hidden_size": 8, "intermediate_size": 16, "vocab_size": 10, "n_routed_experts": 4, "num_experts_per_tok": 2,
    "n_shared_experts": 2, "moe_intermediate_size": 4, "first_k_dense_replace": 3, "moe_layer_freq": 2})",
                                                  "ds.json");
  CHECK(deepseek.experts.moe_layers == 3);  // layers 4, 6 and 8
  const ModelConfig qwen = parse_model_config(R"({"model_type": "qwen2_moe", "num_hidden_layers": 6,
    "num_attention_heads": 2, "hidden_size": 8, "intermediate_size": 16, "vocab_size": 10, "num_experts": 4,
    "num_experts_per_tok": 1, "moe_intermediate_size": 4, "shared_expert_intermediate_size": 12,
    "decoder_sparse_step": 2, "mlp_only_layers": [1]})",
                                              "qwen.json");
  CHECK(qwen.experts.moe_layers == 2);  // layers 3 and 5: layer 1 is listed as dense
  // Qwen2-MoE by hand: q, k, v, o of 8 x 8 with biases on q, k, v; 2 norms; 4 dense layers of a 16-wide MLP; 2
  // routed layers of 4 experts 4 wide, a gated shared expert 12 wide and a router.
  const std::int64_t attention = 4 * 8 * 8 + 3 * 8, norms = 2 * 8;
  const std::int64_t routed = 4 * (3 * 8 * 4) + (3 * 8 * 12 + 8) + 4 * 8;
  CHECK(parameter_count(qwen) == 6 * (attention + norms) + 4 * (3 * 8 * 16) + 2 * routed + 2 * 10 * 8 + 8);
  const auto count = count_parameters(qwen);
  CHECK(count->active == count->total - 10 * 8 - 2 * 3 * (3 * 8 * 4));  // 3 of 4 experts unused per routed layer
  // Without num_experts_per_tok the total is known, the active part is not.
  const ModelConfig unknown_k = parse_model_config(R"({"num_hidden_layers": 2, "num_attention_heads": 2,
    "hidden_size": 8, "vocab_size": 10, "num_local_experts": 4, "intermediate_size": 16})",
                                                   "k.json");
  CHECK(count_parameters(unknown_k)->total > 0);
  CHECK(!count_parameters(unknown_k)->active_known);
  CHECK(figures_not_computed(unknown_k) == std::vector<std::string>{"active parameters", "decode intensity"});
  CHECK_THROWS_WITH_AS(parse_model_config(R"({"num_hidden_layers": 2, "num_attention_heads": 2, "hidden_size": 8,
    "num_local_experts": 4, "num_experts_per_tok": 5})",
                                          "x.json"),
                       doctest::Contains("more than the 4 experts"), BadInput);
}

TEST_CASE("GPT-2's spellings: n_layer, n_head, n_embd, n_positions; 124,439,808 parameters with biases") {
  const ModelConfig m = load_preset("gpt2");
  CHECK(m.layers == 12);
  CHECK(m.heads == 12);
  CHECK(m.kv_heads == 12);
  CHECK(m.hidden == 768);
  CHECK(m.head_dim == 64);
  CHECK(m.max_positions == 1024);
  CHECK(m.intermediate == 4 * 768);  // n_inner absent: 4 x n_embd
  CHECK(m.layout == Layout::Gpt2);
  CHECK(m.tied_embeddings);
  const std::int64_t d = 768;
  const std::int64_t per_layer = 2 * d + (3 * d * d + 3 * d) + (d * d + d) + 2 * d + (4 * d * d + 4 * d) +
                                 (4 * d * d + d);  // ln_1, c_attn, c_proj, ln_2, c_fc, c_proj
  CHECK(parameter_count(m) == 50'257 * d + 1024 * d + 12 * per_layer + 2 * d);
  CHECK(parameter_count(m) == 124'439'808);
  CHECK(has_note(m, "n_layer, n_head, n_embd, n_positions"));
  // Two spellings of one size that disagree are refused, naming both.
  CHECK_THROWS_WITH_AS(
      parse_model_config(R"({"num_hidden_layers": 2, "n_layer": 3, "n_head": 2, "n_embd": 8})", "two.json"),
      doctest::Contains("'num_hidden_layers' = 2 and 'n_layer' = 3"), BadInput);
}

TEST_CASE("other spellings of the KV heads: Falcon's multi_query, num_kv_heads, ChatGLM's group count") {
  const ModelConfig falcon = parse_model_config(R"({"model_type": "falcon", "n_layer": 32, "n_head": 71,
    "hidden_size": 4544, "multi_query": true, "vocab_size": 65024})",
                                                "falcon-7b.json");
  CHECK(falcon.kv_heads == 1);
  CHECK(falcon.head_dim == 64);
  CHECK(kv_bytes_per_token(falcon, find_element_type("bf16", "dtype")) == 2 * 32 * 1 * 64 * 2);
  CHECK(attention_kind_name(falcon) == "multi-query");
  const ModelConfig glm = parse_model_config(R"({"num_layers": 28, "num_attention_heads": 32, "hidden_size": 4096,
    "kv_channels": 128, "multi_query_attention": true, "multi_query_group_num": 2, "seq_length": 8192})",
                                             "glm.json");
  CHECK(glm.kv_heads == 2);
  CHECK(glm.head_dim == 128);
  CHECK(glm.max_positions == 8192);
}

TEST_CASE("tie_word_embeddings absent: the model type's default, and the basis says which") {
  // Google's gemma-7b config.json omits the key: GemmaConfig's default is tied.
  const ModelConfig gemma = load_preset("gemma-7b");
  CHECK(gemma.tied_embeddings);
  CHECK(gemma.tied_embeddings_basis.find("model type 'gemma' defaults to tied") != std::string::npos);
  CHECK(parameter_count(gemma) == 8'537'680'896);  // untied would count 256,000 x 3,072 more: 9,324,112,896
  CHECK(parameter_count(load_preset("gemma-2b")) == 2'506'172'416);  // untied: 3,030,460,416, 21 % too many
  const ModelConfig llama = parse_model_config(R"({"model_type": "llama", "num_hidden_layers": 2,
    "num_attention_heads": 2, "hidden_size": 8, "intermediate_size": 16, "vocab_size": 10})",
                                               "llama.json");
  CHECK(!llama.tied_embeddings);
  CHECK(llama.tied_embeddings_basis.find("model type 'llama' defaults to untied") != std::string::npos);
  const ModelConfig unknown = parse_model_config(R"({"model_type": "newfamily", "num_hidden_layers": 2,
    "num_attention_heads": 2, "hidden_size": 8, "intermediate_size": 16, "vocab_size": 10})",
                                                 "new.json");
  CHECK(!unknown.tied_embeddings);
  CHECK(unknown.tied_embeddings_basis.find("taken as untied") != std::string::npos);
  CHECK(unknown.layout_note.find("an assumption") != std::string::npos);
  const ModelConfig said = parse_model_config(R"({"model_type": "gemma", "num_hidden_layers": 2,
    "num_attention_heads": 2, "hidden_size": 8, "intermediate_size": 16, "vocab_size": 10,
    "tie_word_embeddings": false})",
                                              "said.json");
  CHECK(!said.tied_embeddings);  // the file wins over the default
  CHECK(said.tied_embeddings_basis == "tie_word_embeddings: false in the file");
}

TEST_CASE("Gemma-2 and Qwen2 extras: four norms per layer, biases on q, k and v") {
  // Gemma-2-9B's published config.json: 9,241,705,984 parameters (hidden 3584, 42 layers, 16 heads, 8 KV heads of 256,
  // MLP 14,336, vocabulary 256,000, tied), with pre- and post-norms around attention and MLP.
  const ModelConfig gemma2 = parse_model_config(R"({"model_type": "gemma2", "num_hidden_layers": 42,
    "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 256, "hidden_size": 3584,
    "intermediate_size": 14336, "vocab_size": 256000, "sliding_window": 4096})",
                                                "gemma-2-9b.json");
  const std::int64_t h = 3584;
  CHECK(parameter_count(gemma2) == 42 * (2 * h * 4096 + 2 * h * 2048 + 3 * h * 14'336 + 4 * h) + 256'000 * h + h);
  CHECK(parameter_count(gemma2) == 9'241'705'984);
  // Qwen2.5-7B's published config.json: 7,615,616,512 parameters.
  const ModelConfig qwen = parse_model_config(R"({"model_type": "qwen2", "num_hidden_layers": 28,
    "num_attention_heads": 28, "num_key_value_heads": 4, "hidden_size": 3584, "intermediate_size": 18944,
    "vocab_size": 152064, "tie_word_embeddings": false})",
                                              "qwen2.5-7b.json");
  CHECK(parameter_count(qwen) ==
        28 * (2 * h * h + 2 * h * 512 + (h + 2 * 512) + 3 * h * 18'944 + 2 * h) + 2 * 152'064 * h + h);
  CHECK(parameter_count(qwen) == 7'615'616'512);
}

TEST_CASE("a config without intermediate_size or vocab_size: the cache is sized, the weights are not") {
  const ModelConfig m = parse_model_config(R"({"num_hidden_layers": 32, "num_attention_heads": 32,
    "num_key_value_heads": 8, "hidden_size": 4096})",
                                           "attention-only.json");
  CHECK(m.weights_missing == std::vector<std::string>{"intermediate_size", "vocab_size"});
  CHECK(missing_keys_phrase(m) == "intermediate_size and vocab_size");
  CHECK(!count_parameters(m).has_value());
  CHECK_THROWS_WITH_AS(parameter_count(m), doctest::Contains("no intermediate_size and vocab_size"), BadInput);
  const Sizing s = size_inference(sized(m, "fp16", 2, 1000));
  CHECK(s.bytes_per_token == 2 * 32 * 8 * 128 * 2);
  CHECK(s.kv_bytes == 131'072LL * 1000 * 2);
  CHECK(!s.weights_known);
  CHECK(s.paged_blocks == 63 * 2);  // paging needs no weights either
  CHECK(figures_not_computed(m) == std::vector<std::string>{"weights", "total", "fit", "decode intensity"});
  CHECK(has_note(m, "not computed"));
}

TEST_CASE("heads x head_dim equals hidden_size often, not always: Gemma-7B's 16 x 256 is 4,096 beside 3,072") {
  const ModelConfig gemma = load_preset("gemma-7b");
  CHECK(gemma.heads * gemma.head_dim == 4096);
  CHECK(gemma.hidden == 3072);
  CHECK(has_note(gemma, "16 heads x head_dim 256 = 4096, not hidden_size 3072"));
  CHECK(!has_note(load_preset("llama-2-7b"), "not hidden_size"));
}

TEST_CASE("int4 latent widths that are odd round up once, for the whole figure") {
  const ModelConfig m = parse_model_config(R"({"num_hidden_layers": 3, "num_attention_heads": 2, "kv_lora_rank": 3,
    "qk_rope_head_dim": 2})",
                                           "odd.json");
  const Sizing s = size_inference(sized(m, "int4", 1, 3));
  CHECK(s.bytes_per_token == 8);  // 5 elements x 4 bits x 3 layers = 60 bits
  CHECK(s.kv_bytes == 23);        // 60 bits x 3 tokens = 180 bits = 22.5 bytes
  CHECK(!s.weights_known);        // no hidden_size, qk_nope_head_dim, v_head_dim, vocab_size
}
