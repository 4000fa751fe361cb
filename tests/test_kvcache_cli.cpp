// `dlsys-lab run kvcache` in-process: the documented JSON keys with exact values, a user's config.json, and every kind
// of bad input ending in exit 2 with a message that names what was wrong.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/cli_capture.h"

using namespace dlsys;

namespace {

testing::CliOutcome run_kvcache(const std::vector<std::string>& sets, bool json = true) {
  return testing::run_lesson_captured("kvcache", sets, json);
}

// A tiny live decoder keeps these tests fast; the calculator's numbers do not depend on it.
const std::vector<std::string> kTinyLive = {"d_model=32", "layers=2",  "heads=2",  "kv_heads=1",
                                            "tokens=8",   "repeats=1", "threads=1"};

// The tiny settings first, so a test's own settings (given later) win.
std::vector<std::string> with_tiny_live(const std::vector<std::string>& sets) {
  std::vector<std::string> all = kTinyLive;
  all.insert(all.end(), sets.begin(), sets.end());
  return all;
}

struct TempFile {
  std::filesystem::path path;
  explicit TempFile(const std::string& text) {
    static int counter = 0;
    path = std::filesystem::temp_directory_path() /
           ("dlsys_kvcache_cli_" + std::to_string(getpid()) + "_" + std::to_string(counter++) + ".json");
    std::ofstream(path) << text;
  }
  ~TempFile() { std::filesystem::remove(path); }
};

void expect_bad_input(std::vector<std::string> sets, const std::string& expected) {
  testing::check_refused(run_kvcache(with_tiny_live(std::move(sets))), expected);
}

}  // namespace

TEST_CASE(
    "run kvcache: the README's command gives the course's numbers exactly, and the live cache equals the formula") {
  const testing::CliOutcome r =
      run_kvcache(with_tiny_live({"model=llama-2-7b", "batch=1", "seq=4096", "dtype=fp16", "block=16", "gpu_gb=80"}));
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto json = nlohmann::json::parse(r.out);
  const auto& t = json["theory"];
  CHECK(t["bytes_per_token"] == 524'288);
  CHECK(t["kv_bytes"] == 2'147'483'648LL);
  CHECK(t["kv_gib"] == 2.0);
  CHECK(t["weights_bytes"] == 13'476'831'232LL);
  CHECK(t["total_bytes"] == 13'476'831'232LL + 2'147'483'648LL + 1'000'000'000LL);
  CHECK(t["training_states_bytes"] == 107'814'649'856LL);  // 16 bytes per parameter, model states only (E8)
  CHECK(t["max_batch_fit"] == 30);
  CHECK(t["max_seq_fit"] == 124'975);
  CHECK(t["paged_blocks"] == 256);
  CHECK(t["paged_waste_bytes"] == 0);
  const auto& m = json["measured"];
  for (const char* key : {"kv_allocated_bytes", "decode_us_cached", "decode_us_uncached", "speedup"})
    CHECK_MESSAGE(m.contains(key), key);
  CHECK(m["kv_allocated_bytes"] == 2 * 2 * 1 * 16 * 4 * 8);  // 2 x layers x kv_heads x head_dim x fp32 x tokens
  CHECK(m["kv_allocated_bytes"] == t["live_kv_bytes"]);
  CHECK(m["tokens_match"] == true);
  CHECK(m["max_abs_logit_diff"].get<double>() < 1e-4);
  CHECK(m["decode_us_cached"].get<double>() > 0);
  CHECK(m["speedup"].get<double>() > 0);
  CHECK(json["series"].size() == 5);
  CHECK(json["series"][0]["points"].size() == 8);
}

TEST_CASE("run kvcache: text report shows exact bytes in GB and GiB and the speed-up line") {
  const testing::CliOutcome r = run_kvcache(with_tiny_live({"seq=1000", "batch=3"}), false);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("2,147,483,648") == std::string::npos);
  CHECK(r.out.find("524,288 B") != std::string::npos);
  CHECK(r.out.find("1,572,864,000 B = 1.57 GB (1.46 GiB)") != std::string::npos);  // 524,288 x 1000 x 3
  CHECK(r.out.find("189 blocks of 16 tokens") != std::string::npos);
  CHECK(r.out.find("speed-up: last token") != std::string::npos);
}

TEST_CASE("run kvcache: Mistral's sliding window caps the cache; a user config.json overrides the preset") {
  const testing::CliOutcome mistral = run_kvcache(with_tiny_live({"model=mistral-7b", "seq=16384", "batch=1"}));
  REQUIRE(mistral.code == 0);
  const auto mj = nlohmann::json::parse(mistral.out);
  CHECK(mj["theory"]["cached_tokens"] == 4096);
  CHECK(mj["theory"]["kv_bytes"] == 131'072LL * 4096);
  CHECK(mj["theory"]["max_seq_fit"] == -1);

  TempFile config(R"({"num_hidden_layers": 40, "num_attention_heads": 40, "hidden_size": 5120,
                      "intermediate_size": 13824, "vocab_size": 32000})");
  const testing::CliOutcome r =
      run_kvcache(with_tiny_live({"model=llama-2-7b", "config=" + config.path.string(), "seq=100"}));
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto json = nlohmann::json::parse(r.out);
  CHECK(json["theory"]["bytes_per_token"] == 819'200);  // the 13B shape, not the preset's 7B
  CHECK(json["theory"]["kv_heads"] == 40);              // num_key_value_heads absent -> num_attention_heads
  CHECK(json["theory"]["model"] == config.path.filename().string());  // titles name the file; errors the path
}

TEST_CASE("run kvcache: gpu=this-machine sizes against this machine's memory, with no ridge point") {
  const testing::CliOutcome r = run_kvcache(with_tiny_live({"gpu=this-machine"}));
  REQUIRE(r.code == 0);
  const auto json = nlohmann::json::parse(r.out);
  CHECK(json["theory"]["gpu_bytes"].get<std::int64_t>() > 0);
  CHECK(json["theory"]["gpu_source"].get<std::string>().find("this") != std::string::npos);
  CHECK(json["theory"]["ridge_flop_per_byte"] == 0);
  CHECK(json["theory"]["decode_bound"] == "");  // no datasheet peak: no side of a ridge to name
  CHECK(json["theory"]["decode_roofline_us"].is_null());
  CHECK(json["theory"]["decode_intensity"].get<double>() > 0);  // the intensity itself needs no GPU
}

TEST_CASE("run kvcache: bad input exits 2 and says what was wrong") {
  expect_bad_input({"model=llama-9"}, "llama-2-7b, llama-2-13b, llama-2-70b, llama-3-8b");  // the presets are listed
  expect_bad_input({"dtype=fp12"}, "one of: fp32, fp16, bf16, fp8, int8, int4");
  expect_bad_input({"batch=0"}, "parameter 'batch': value '0'");
  expect_bad_input({"seq=-4"}, "parameter 'seq': value '-4'");
  expect_bad_input({"block=0"}, "parameter 'block'");
  expect_bad_input({"gpu_gb=-1"}, "parameter 'gpu_gb'");
  expect_bad_input({"batch=1000000000000"}, "overflows 64 bits");
  expect_bad_input({"seq=8192"}, "max_position_embeddings");
  expect_bad_input({"heads=3"}, "parameter 'heads': value 3 does not divide d_model 32");
  expect_bad_input({"heads=2", "kv_heads=3"}, "parameter 'kv_heads'");
  expect_bad_input({"config=/nonexistent/config.json"}, "cannot open");

  TempFile malformed("{\n  \"num_hidden_layers\": 32,\n  \"num_attention_heads\": 32,\n  \"hidden_size\": 4096,,\n}\n");
  expect_bad_input({"config=" + malformed.path.string()}, "not valid JSON at line 4");
  TempFile missing(R"({"num_hidden_layers": 32, "num_attention_heads": 32, "intermediate_size": 1, "vocab_size": 1})");
  expect_bad_input({"config=" + missing.path.string()}, "no head_dim and no hidden_size");
  TempFile zero(R"({"num_hidden_layers": 0, "num_attention_heads": 32, "hidden_size": 4096})");
  expect_bad_input({"config=" + zero.path.string()}, "'num_hidden_layers' must be at least 1");
  TempFile huge(R"({"num_hidden_layers": 9000000000000, "num_attention_heads": 4096, "hidden_size": 4096000,
                    "intermediate_size": 1, "vocab_size": 1})");
  expect_bad_input({"config=" + huge.path.string()}, "overflows 64 bits");
}

TEST_CASE("run kvcache: a live run too large for free memory is refused before allocating, with the figure") {
  const testing::CliOutcome r = run_kvcache({"d_model=8192", "layers=256", "heads=64", "kv_heads=64", "tokens=65536"});
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find("the live decoder") != std::string::npos);
  CHECK(r.err.find("needs") != std::string::npos);
  CHECK(r.err.find("GiB") != std::string::npos);
}

TEST_CASE("run kvcache: the defaults (1,000 tokens, batch 8) show both kinds of paged waste, exactly") {
  const testing::CliOutcome r = run_kvcache(kTinyLive);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto json = nlohmann::json::parse(r.out);
  CHECK(json["params"]["seq"] == "1000");
  CHECK(json["params"]["batch"] == "8");
  CHECK(json["params"]["gpu"] == "h100-sxm");
  const auto& t = json["theory"];
  CHECK(t["paged_blocks"] == 63 * 8);                             // ceil(1000 / 16) blocks per sequence
  CHECK(t["paged_waste_bytes"] == 8LL * 524'288 * 8);             // 8 empty slots per sequence
  CHECK(t["reserve_waste_bytes"] == 3096LL * 524'288 * 8);        // 4,096 reserved, 1,000 used
  CHECK(t["gpu_bytes"] == 80'000'000'000LL);                      // the H100's "80 GB" as sold: 74.5 GiB
  CHECK(t["max_seq_fit"] == 65'523'168'768LL / (524'288LL * 8));  // memory alone: 15,621 tokens
  CHECK(t["max_seq_usable"] == 4096);                             // but Llama 2's config allows 4,096
  CHECK(t["max_seq_limited_by"] == "max_position_embeddings");
  CHECK(t["decode_bound"] == "memory-bound");
  CHECK(t["ridge_flop_per_byte"].get<double>() == doctest::Approx(989.5 / 3.35));
  CHECK(t["attention"] == "multi-head");
}

TEST_CASE(
    "run kvcache: the text report says GB and GiB of the card, the longest context, and which side of the "
    "ridge decode is on, with no thresholds in it") {
  const testing::CliOutcome r = run_kvcache(kTinyLive, false);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("80 GB (74.51 GiB) [H100 SXM: 80 GB as sold, GB = 1e9 bytes]") != std::string::npos);
  CHECK(r.out.find("4,096 tokens: its config allows 4,096 positions; memory alone would allow 15,621") !=
        std::string::npos);
  CHECK(r.out.find("memory-bound") != std::string::npos);
  CHECK(r.out.find("ridge of the H100 SXM 295 FLOP/byte") != std::string::npos);
  CHECK(r.out.find("expected at least") == std::string::npos);
  CHECK(r.out.find("PASS") == std::string::npos);
  CHECK(r.out.find("where recomputing does") != std::string::npos);  // what to expect, from the FLOP ratio
  CHECK(r.out.find("batch 8 at 1,000 tokens") != std::string::npos);
}

TEST_CASE("run kvcache: a decode step at batch 512 and a short context is compute-bound") {
  const testing::CliOutcome r = run_kvcache(with_tiny_live({"model=llama-3-8b", "batch=512", "seq=1"}));
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["theory"]["decode_bound"] == "compute-bound");
}

TEST_CASE("run kvcache: the GPU sets the memory and the ridge; the override sets the memory only") {
  const auto a100 = nlohmann::json::parse(run_kvcache(with_tiny_live({"gpu=a100-40gb"})).out)["theory"];
  CHECK(a100["gpu_bytes"] == 40'000'000'000LL);
  CHECK(a100["ridge_flop_per_byte"].get<double>() == doctest::Approx(312 / 1.555));
  const auto override = nlohmann::json::parse(run_kvcache(with_tiny_live({"gpu=a100-40gb", "gpu_gb=24"})).out);
  CHECK(override["theory"]["gpu_bytes"] == 24'000'000'000LL);
  CHECK(override["theory"]["gpu_source"] == "chosen: 24 GB");
  CHECK(override["theory"]["ridge_flop_per_byte"].get<double>() == doctest::Approx(312 / 1.555));
  expect_bad_input({"gpu=v100"}, "parameter 'gpu'");
}

TEST_CASE("run kvcache: DeepSeek-V3 and Mixtral presets give their cache and their weights") {
  const auto v3 = nlohmann::json::parse(run_kvcache(with_tiny_live({"model=deepseek-v3", "dtype=bf16"})).out);
  CHECK(v3["theory"]["attention"] == "latent");
  CHECK(v3["theory"]["bytes_per_token"] == (512 + 64) * 61 * 2);
  CHECK(v3["theory"]["kv_bytes"] == 70'272LL * 1000 * 8);
  CHECK(v3["theory"]["parameters"] == 671'026'419'200LL);
  CHECK(v3["theory"]["active_parameters"] == 36'625'618'432LL);
  CHECK(v3["theory"]["experts_routed"] == 256);
  CHECK(v3["theory"]["fits"] == false);  // 1.34 TB of 16-bit weights
  const auto mixtral = nlohmann::json::parse(run_kvcache(with_tiny_live({"model=mixtral-8x7b"})).out);
  CHECK(mixtral["theory"]["parameters"] == 46'702'792'704LL);
  CHECK(mixtral["theory"]["active_parameters"] == 12'748'853'248LL);
  const testing::CliOutcome text = run_kvcache(with_tiny_live({"model=mixtral-8x7b"}), false);
  CHECK(text.out.find("46,702,792,704 parameters, 12,748,853,248 active per token") != std::string::npos);
  CHECK(text.out.find("longest context at batch 8: none: no room is left") != std::string::npos);  // 93 GB of weights
}

TEST_CASE("run kvcache: a config without intermediate_size and vocab_size sizes the cache and says what it cannot") {
  TempFile config(R"({"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
                      "hidden_size": 4096})");
  const testing::CliOutcome r = run_kvcache(with_tiny_live({"config=" + config.path.string(), "batch=1"}));
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto t = nlohmann::json::parse(r.out)["theory"];
  CHECK(t["kv_bytes"] == 131'072LL * 1000);
  CHECK(t["weights_known"] == false);
  CHECK(t["parameters"].is_null());
  CHECK(t["total_bytes"].is_null());
  CHECK(t["fits"].is_null());
  CHECK(t["max_batch_fit"].is_null());
  CHECK(t["decode_intensity"].is_null());
  CHECK(t["missing_keys"] == nlohmann::json::array({"intermediate_size", "vocab_size"}));
  CHECK(t["not_computed"] == nlohmann::json::array({"weights", "total", "fit", "decode intensity"}));
  const testing::CliOutcome text = run_kvcache(with_tiny_live({"config=" + config.path.string(), "batch=1"}), false);
  REQUIRE(text.code == 0);
  CHECK(text.out.find("weights, total, fit: not computed (the config has no intermediate_size, vocab_size)") !=
        std::string::npos);
  CHECK(text.out.find("131,072,000 B") != std::string::npos);
}

TEST_CASE("run kvcache: an official Gemma file without tie_word_embeddings is counted tied, and the report says so") {
  const testing::CliOutcome r = run_kvcache(with_tiny_live({"model=gemma-7b"}), false);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("8,537,680,896 parameters") != std::string::npos);
  CHECK(r.out.find("output layer tied to the embeddings (not in the file: model type 'gemma' defaults to tied)") !=
        std::string::npos);
  CHECK(r.out.find("16 heads x head_dim 256 = 4096, not hidden_size 3072") != std::string::npos);
}
