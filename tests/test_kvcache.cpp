// KV-cache lesson theory: presets against their published shapes, the config parser's conventions and errors,
// and the sizing formulas against the course's worked numbers, with its misprints corrected.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "engine/errors.h"
#include "engine/params.h"
#include "lessons/kvcache/kv_theory.h"
#include "lessons/kvcache/kvcache_lesson.h"
#include "lessons/kvcache/kvcache_steps.h"
#include "lessons/kvcache/model_config.h"
#include "tests/support/typed_values.h"

using namespace dlsys;
using namespace dlsys::kvcache;

namespace {

// A config.json written to a temporary file, removed when the test ends.
struct TempConfig {
  std::filesystem::path path;
  explicit TempConfig(const std::string& text, const std::string& name = "config.json") {
    static int counter = 0;
    path = std::filesystem::temp_directory_path() /
           ("dlsys_kvcache_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++) + "_" + name);
    std::ofstream(path) << text;
  }
  ~TempConfig() { std::filesystem::remove(path); }
};

SizingQuery query(const std::string& model, const std::string& kv_type, std::int64_t batch, std::int64_t seq) {
  SizingQuery q;
  q.model = load_preset(model);
  q.kv_type = find_element_type(kv_type, "dtype");
  q.weights_type = find_element_type("fp16", "weights_dtype");
  q.batch = batch;
  q.seq = seq;
  q.block_tokens = 16;
  q.workspace_bytes = 1'000'000'000;
  q.gpu_bytes = 80'000'000'000;
  return q;
}

std::string bad_input_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const BadInput& e) {
    return e.what();
  }
  return "(no BadInput thrown)";
}

const char* kLlamaLike = R"({
  "num_hidden_layers": 2,
  "num_attention_heads": 4,
  "hidden_size": 64,
  "intermediate_size": 128,
  "vocab_size": 100
})";

}  // namespace

TEST_CASE("the course's example comes out exactly: Llama-2-7B, fp16, batch 1, 4096 tokens = 2 GiB") {
  const Sizing s = size_inference(query("llama-2-7b", "fp16", 1, 4096));
  CHECK(s.bytes_per_token == 524'288);  // 0.5 MiB, not the rule of thumb's "about 1 MB" (E6)
  CHECK(s.bytes_per_token == 2 * 32 * 4096 * 2);
  CHECK(s.kv_bytes == 2'147'483'648);  // 1 x 4096 x 2 x 32 x 4096 x 2 = exactly 2 GiB = 2.15 GB (E23)
  CHECK(s.kv_bytes == (std::int64_t(1) << 31));
  CHECK(s.parameters.total == 6'738'415'616);
  CHECK(s.weights_bytes == 13'476'831'232);  // "7B x 2 bytes = 14 GB", with the exact count
  CHECK(s.total_bytes == 13'476'831'232 + 2'147'483'648 + 1'000'000'000);
}

TEST_CASE("1 MB per token is a 13B model in fp16 (erratum E6)") {
  CHECK(kv_bytes_per_token(load_preset("llama-2-13b"), find_element_type("fp16", "dtype")) == 819'200);
  CHECK(kv_bytes_per_token(load_preset("llama-2-7b"), find_element_type("fp32", "dtype")) == 1'048'576);
}

TEST_CASE("presets: shapes from their config.json and parameter counts that round to the papers' sizes") {
  struct Expected {
    const char* name;
    std::int64_t layers, heads, kv_heads, head_dim, parameters, fp16_bytes_per_token;
  };
  const Expected expected[] = {
      {"llama-2-7b", 32, 32, 32, 128, 6'738'415'616, 524'288},
      {"llama-2-13b", 40, 40, 40, 128, 13'015'864'320, 819'200},
      {"llama-2-70b", 80, 64, 8, 128, 68'976'648'192, 327'680},
      {"llama-3-8b", 32, 32, 8, 128, 8'030'261'248, 131'072},
      {"llama-3-70b", 80, 64, 8, 128, 70'553'706'496, 327'680},
      {"llama-3.1-405b", 126, 128, 8, 128, 405'853'388'800, 516'096},
      {"mistral-7b", 32, 32, 8, 128, 7'241'732'096, 131'072},
      {"gemma-2b", 18, 8, 1, 256, 2'506'172'416, 18'432},
      {"gemma-7b", 28, 16, 16, 256, 8'537'680'896, 458'752},
      {"mixtral-8x7b", 32, 32, 8, 128, 46'702'792'704, 131'072},
      // Latent attention: (512 + 64) x 61 layers x 2 bytes; head_dim is the key's 128 + 64 per head.
      {"deepseek-v3", 61, 128, 128, 192, 671'026'419'200, 70'272},
      {"gpt2", 12, 12, 12, 64, 124'439'808, 36'864},
  };
  CHECK(preset_names().size() == std::size(expected));
  for (const auto& e : expected) {
    INFO(e.name);
    const ModelConfig m = load_preset(e.name);
    CHECK(!m.source.empty());
    CHECK(!m.nominal_parameters.empty());
    CHECK(m.layers == e.layers);
    CHECK(m.heads == e.heads);
    CHECK(m.kv_heads == e.kv_heads);
    CHECK(m.head_dim == e.head_dim);
    CHECK(parameter_count(m) == e.parameters);
    CHECK(kv_bytes_per_token(m, find_element_type("fp16", "dtype")) == e.fp16_bytes_per_token);
  }
}

TEST_CASE("grouped-query attention stores only the KV heads (erratum E7)") {
  const ModelConfig m = load_preset("llama-2-70b");
  ModelConfig as_if_mha = m;
  as_if_mha.kv_heads = m.heads;
  const auto fp16 = find_element_type("fp16", "dtype");
  CHECK(kv_bytes_per_token(as_if_mha, fp16) == 8 * kv_bytes_per_token(m, fp16));
}

TEST_CASE("element types: int4 is half a byte, counted exactly") {
  const ModelConfig m = load_preset("llama-2-7b");
  const std::int64_t expected[] = {1'048'576, 524'288, 524'288, 262'144, 262'144, 131'072};
  for (std::size_t i = 0; i < element_types().size(); ++i)
    CHECK(kv_bytes_per_token(m, element_types()[i]) == expected[i]);
  // Weights of an odd parameter count in int4 round up to whole bytes.
  ModelConfig odd;
  odd.name = "odd";
  odd.layers = odd.heads = odd.kv_heads = 1;
  odd.hidden = odd.head_dim = odd.intermediate = odd.vocab = 1;
  odd.tied_embeddings = true;
  CHECK(parameter_count(odd) == 1 + 4 + 3 + 2 + 1);  // embedding, q k v o, mlp, norms, final norm
  SizingQuery q = query("llama-2-7b", "int4", 1, 1);
  q.model = odd;
  q.weights_type = find_element_type("int4", "weights_dtype");
  CHECK(size_inference(q).weights_bytes == 6);  // 11 parameters x 4 bits = 44 bits -> 6 bytes
  CHECK(bad_input_message([] { find_element_type("fp12", "dtype"); }).find("fp32, fp16, bf16, fp8, int8, int4") !=
        std::string::npos);
}

TEST_CASE("the sliding window caps Mistral's cache at 4096 tokens") {
  const Sizing s = size_inference(query("mistral-7b", "fp16", 2, 16384));
  CHECK(s.cached_tokens == 4096);
  CHECK(s.kv_bytes == 131'072LL * 4096 * 2);
  CHECK(s.max_seq_fit == -1);         // any length fits: the cache stops growing at the window
  CHECK(s.max_seq_usable == 32'768);  // but its config allows 32,768 positions
  CHECK(s.max_seq_limited_by == "max_position_embeddings");
  CHECK(s.reserve_tokens == 4096);
  CHECK(size_inference(query("mistral-7b", "fp16", 1, 1000)).cached_tokens == 1000);
}

TEST_CASE("what fits in 80 GB beside the weights and a 1 GB workspace") {
  const Sizing s = size_inference(query("llama-2-7b", "fp16", 1, 4096));
  // 80e9 - 13,476,831,232 - 1e9 = 65,523,168,768 bytes left for the cache.
  CHECK(s.max_batch_fit == 30);     // 30 x 2 GiB = 64.4 GB; 31 would need 66.6 GB
  CHECK(s.max_seq_fit == 124'975);  // 65,523,168,768 / 524,288, rounded down: what memory allows
  CHECK(s.max_seq_usable == 4096);  // but Llama 2's config allows 4,096 positions
  CHECK(s.max_seq_limited_by == "max_position_embeddings");
  ModelConfig no_limit = load_preset("llama-2-7b");
  no_limit.max_positions = 0;
  SizingQuery unknown_length = query("llama-2-7b", "fp16", 1, 4096);
  unknown_length.model = no_limit;
  CHECK(size_inference(unknown_length).max_seq_usable == 124'975);
  CHECK(size_inference(unknown_length).max_seq_limited_by == "memory");
  SizingQuery tight = query("llama-2-7b", "fp16", 64, 1000);  // 64 sequences: memory allows 1,952 tokens each
  CHECK(size_inference(tight).max_seq_usable == 65'523'168'768LL / (524'288LL * 64));
  CHECK(size_inference(tight).max_seq_limited_by == "memory");
  SizingQuery small = query("llama-2-70b", "fp16", 1, 4096);
  small.gpu_bytes = 24'000'000'000;  // 70B weights alone (138 GB) do not fit in 24 GB
  CHECK(size_inference(small).max_batch_fit == 0);
  CHECK(size_inference(small).max_seq_fit == 0);
}

TEST_CASE("paged cache: ceil(seq / B) blocks per sequence, waste only in the last block") {
  const Sizing full = size_inference(query("llama-2-7b", "fp16", 1, 4096));
  CHECK(full.paged_blocks == 256);
  CHECK(full.paged_waste_bytes == 0);
  const Sizing s = size_inference(query("llama-2-7b", "fp16", 3, 1000));
  CHECK(s.paged_blocks_per_seq == 63);  // 63 x 16 = 1008 tokens
  CHECK(s.paged_blocks == 189);
  CHECK(s.paged_waste_bytes == 8LL * 524'288 * 3);  // 8 empty slots in each sequence's last block
  CHECK(s.reserve_tokens == 4096);                  // Llama 2's max_position_embeddings
  CHECK(s.reserve_waste_bytes == 3096LL * 524'288 * 3);
}

TEST_CASE("sizes that overflow 64 bits, and zero sizes, are refused") {
  CHECK(bad_input_message([] {
          size_inference(query("llama-2-7b", "fp16", 1'000'000'000'000, 4096));
        }).find("overflows 64 bits") != std::string::npos);
  CHECK(bad_input_message([] { size_inference(query("llama-2-7b", "fp16", 0, 4096)); }).find("'batch'") !=
        std::string::npos);
  CHECK(bad_input_message([] { size_inference(query("llama-2-7b", "fp16", 1, -5)); }).find("'seq'") !=
        std::string::npos);
  const std::string huge =
      R"({"num_hidden_layers": 4000000000000, "num_attention_heads": 4000000, "hidden_size": 4000000,
    "intermediate_size": 1, "vocab_size": 1})";
  CHECK(bad_input_message([&] { parse_model_config(huge, "huge.json"); }).find("overflows 64 bits") !=
        std::string::npos);
}

TEST_CASE("config.json: Hugging Face conventions for absent keys") {
  const ModelConfig m = parse_model_config(kLlamaLike, "mini.json");
  CHECK(m.kv_heads == 4);   // num_key_value_heads absent -> num_attention_heads
  CHECK(m.head_dim == 16);  // head_dim absent -> hidden_size / num_attention_heads
  CHECK(m.sliding_window == 0);
  CHECK(m.max_positions == 0);
  CHECK(!m.tied_embeddings);
  const ModelConfig gqa = parse_model_config(R"({"num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 60,
    "head_dim": 32, "num_key_value_heads": 2, "intermediate_size": 8, "vocab_size": 10, "sliding_window": 128,
    "max_position_embeddings": 512})",
                                             "gqa.json");
  CHECK(gqa.head_dim == 32);  // given explicitly: 4 x 32 need not equal hidden_size
  CHECK(gqa.kv_heads == 2);
  CHECK(gqa.sliding_window == 128);
  const ModelConfig off = parse_model_config(R"({"num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 64,
    "intermediate_size": 8, "vocab_size": 10, "sliding_window": 128, "use_sliding_window": false})",
                                             "qwen.json");
  CHECK(off.sliding_window == 0);
  const ModelConfig null_window = parse_model_config(R"({"num_hidden_layers": 2, "num_attention_heads": 4,
    "hidden_size": 64, "intermediate_size": 8, "vocab_size": 10, "sliding_window": null})",
                                                     "v02.json");
  CHECK(null_window.sliding_window == 0);
}

TEST_CASE("config.json files: read from disk; malformed JSON names the line, a missing key names the key") {
  TempConfig good(kLlamaLike);
  CHECK(load_model_config_file(good.path.string()).layers == 2);

  TempConfig broken("{\n  \"num_hidden_layers\": 2,\n  \"hidden_size\" 64\n}\n");
  const std::string syntax = bad_input_message([&] { load_model_config_file(broken.path.string()); });
  CHECK(syntax.find("not valid JSON at line 3") != std::string::npos);

  TempConfig missing(R"({"num_hidden_layers": 2, "hidden_size": 64, "intermediate_size": 8, "vocab_size": 10})");
  CHECK(bad_input_message([&] {
          load_model_config_file(missing.path.string());
        }).find("missing key 'num_attention_heads'") != std::string::npos);

  TempConfig negative(R"({"num_hidden_layers": -2, "num_attention_heads": 4, "hidden_size": 64})");
  CHECK(bad_input_message([&] {
          load_model_config_file(negative.path.string());
        }).find("'num_hidden_layers' must be at least 1") != std::string::npos);

  TempConfig text_value(R"({"num_hidden_layers": "32", "num_attention_heads": 4, "hidden_size": 64})");
  CHECK(bad_input_message([&] {
          load_model_config_file(text_value.path.string());
        }).find("'num_hidden_layers' must be a whole number") != std::string::npos);

  TempConfig uneven(R"({"num_hidden_layers": 2, "num_attention_heads": 6, "num_key_value_heads": 4,
    "hidden_size": 96, "intermediate_size": 8, "vocab_size": 10})");
  CHECK(bad_input_message([&] { load_model_config_file(uneven.path.string()); }).find("not a multiple") !=
        std::string::npos);

  CHECK(bad_input_message([] { load_model_config_file("/nonexistent/config.json"); }).find("cannot open") !=
        std::string::npos);
  CHECK(bad_input_message([] { parse_model_config("[1, 2]", "list.json"); }).find("expected a JSON object") !=
        std::string::npos);
}

TEST_CASE("an unknown preset lists the presets") {
  const std::string message = bad_input_message([] { load_preset("llama-9"); });
  CHECK(message.find("unknown model 'llama-9'") != std::string::npos);
  CHECK(message.find("llama-2-7b") != std::string::npos);
  CHECK(message.find("mistral-7b") != std::string::npos);
}

namespace {
// Gemma-2-9B's config.json, as published (the keys the sizing reads).
constexpr const char* kGemma2_9b = R"({"model_type": "gemma2", "num_hidden_layers": 42, "num_attention_heads": 16,
  "num_key_value_heads": 8, "head_dim": 256, "hidden_size": 3584, "intermediate_size": 14336, "vocab_size": 256000,
  "max_position_embeddings": 8192, "sliding_window": 4096, "cache_implementation": "hybrid",
  "tie_word_embeddings": true})";

SizingQuery user_query(const ModelConfig& model, std::int64_t seq) {
  SizingQuery q;
  q.model = model;
  q.kv_type = find_element_type("bf16", "dtype");
  q.weights_type = find_element_type("bf16", "weights_dtype");
  q.seq = seq;
  q.gpu_bytes = 80'000'000'000;
  return q;
}
}  // namespace

TEST_CASE("Gemma-2 alternates window and full layers: 9B at 8,192 tokens holds 2,113,929,216 bytes") {
  const ModelConfig m = parse_model_config(kGemma2_9b, "gemma-2-9b.json");
  CHECK(m.window_layers == 21);
  const Sizing s = size_inference(user_query(m, 8192));
  // 21 full layers x 8192 tokens + 21 local layers x 4096 tokens, 8 KiB per layer-token (2 x 8 x 256 x 2 bytes).
  CHECK(s.kv_bytes == 2'113'929'216);
  CHECK(s.max_seq_fit > 0);  // the full layers keep growing: the length is limited, not "any"
  // The same file listing its layers one by one gives the same size.
  nlohmann::json listed = nlohmann::json::parse(kGemma2_9b);
  listed.erase("cache_implementation");
  listed["model_type"] = "custom";
  for (int i = 0; i < 42; ++i) listed["layer_types"].push_back(i % 2 == 0 ? "sliding_attention" : "full_attention");
  CHECK(size_inference(user_query(parse_model_config(listed.dump(), "listed.json"), 8192)).kv_bytes == 2'113'929'216);
  // Every layer windowed (Mistral style) would have been 1,409,286,144 bytes.
  listed["layer_types"] = std::vector<std::string>(42, "sliding_attention");
  CHECK(size_inference(user_query(parse_model_config(listed.dump(), "all.json"), 8192)).kv_bytes == 1'409'286'144);
}

TEST_CASE("config keys the sizing does not model are refused by name") {
  const std::string base = R"({"num_hidden_layers": 2, "num_attention_heads": 2, "hidden_size": 64,
    "intermediate_size": 8, "vocab_size": 10, )";
  for (const char* key : {"attention_chunk_size", "num_kv_shared_layers"}) {
    const std::string text = base + "\"" + key + "\": 8}";
    CHECK_THROWS_WITH_AS(parse_model_config(text, "x.json"), doctest::Contains(key), BadInput);
  }
  CHECK_THROWS_WITH_AS(parse_model_config(base + R"("cache_implementation": "quantized"})", "x.json"),
                       doctest::Contains("cache_implementation"), BadInput);
  CHECK_THROWS_WITH_AS(parse_model_config(base + R"("layer_types": ["full_attention"]})", "x.json"),
                       doctest::Contains("one type per layer"), BadInput);
  CHECK_THROWS_WITH_AS(parse_model_config(base + R"("sliding_window": 8, "use_sliding_window": "false"})", "x.json"),
                       doctest::Contains("use_sliding_window"), BadInput);
  CHECK_NOTHROW(parse_model_config(base + R"("num_experts": null, "kv_lora_rank": 0})", "x.json"));
  CHECK_THROWS_WITH_AS(parse_model_config(base + R"("num_local_experts": 8, "n_routed_experts": 8})", "x.json"),
                       doctest::Contains("both count experts"), BadInput);
  CHECK_THROWS_WITH_AS(parse_model_config(base + R"("kv_lora_rank": 512})", "x.json"),
                       doctest::Contains("qk_rope_head_dim"), BadInput);
}

TEST_CASE("the formula step's curves: one per element width, the panel's width highlighted even for bf16") {
  const KvCacheLesson lesson;
  const auto steps = make_steps(test::typed_params(lesson, {"dtype=bf16"}));
  int chosen = 0;
  for (const CacheCurve& curve : steps->cache_curves) {
    if (!curve.chosen) continue;
    ++chosen;
    CHECK(curve.type_name == "fp16, bf16");
  }
  CHECK(chosen == 1);
  CHECK(steps->memory_label == "H100 SXM: 80 GB as sold, GB = 1e9 bytes");
  CHECK(steps->roofline.has_gpu);
}

TEST_CASE(
    "kvcache's parameters name a config file without reading it; its figures the file cannot fix read back empty") {
  const KvCacheLesson lesson;
  // A recorded run's parameters still read where its config file is gone; the sizing reads the file and says so.
  const KvCacheParams gone = test::typed_params(lesson, {"config=/nonexistent/config.json", "gpu=this-machine"});
  CHECK(gone.config == "/nonexistent/config.json");
  CHECK(gone.gpu == nullptr);
  CHECK(bad_input_message([&] { lesson.theory_of(gone); }).find("cannot open") != std::string::npos);

  TempConfig cache_only(R"({"num_hidden_layers": 2, "num_attention_heads": 4, "hidden_size": 64})");
  const KvCacheTheory theory = lesson.theory_of(test::typed_params(lesson, {"config=" + cache_only.path.string()}));
  CHECK_FALSE(theory.weights_known);
  CHECK_FALSE(theory.parameters.has_value());
  CHECK_FALSE(theory.decode_roofline_us.has_value());
  const nlohmann::ordered_json json = theory;
  CHECK(json["parameters"].is_null());
  CHECK(json["decode_intensity"].is_null());
  const auto back = json.get<KvCacheTheory>();
  CHECK_FALSE(back.total_bytes.has_value());
  CHECK(nlohmann::ordered_json(back) == json);
}
