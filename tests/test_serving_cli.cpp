// The serving lesson end to end: bad input refused with the parameter named and what is allowed, the documented
// JSON keys of a real run, the theory's exact numbers, and the text report's benchmark line.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "engine/backend.h"
#include "engine/errors.h"
#include "engine/params.h"
#include "lessons/registry.h"
#include "lessons/serving/serving_lesson.h"
#include "tests/support/cli_capture.h"

using namespace dlsys;

namespace {

testing::CliOutcome run_serving(const std::vector<std::string>& sets, bool json = true) {
  return testing::run_lesson_captured("serving", sets, json);
}

// A model and stream small enough to serve in a blink.
std::vector<std::string> small(std::vector<std::string> more = {}) {
  return testing::with_sets(
      {"d_model=32", "layers=2", "context=64", "requests=8", "prompt=8", "mean_output=4", "max_output=16", "rate=2000",
       "max_batch=4", "delay_ms=1", "spec_requests=1", "kv_budget=64KiB"},
      more);
}

}  // namespace

TEST_CASE("serving: bad input exits 2 naming the parameter, the value and what is allowed") {
  const auto check = testing::refusal_check("serving");
  check({"rate=0"}, "parameter 'rate': value '0' is not allowed (out of range); allowed: a number from 0.01");
  check({"rate=-5"}, "parameter 'rate': value '-5' is not allowed");
  check({"max_batch=0"}, "parameter 'max_batch': value '0' is not allowed (out of range); allowed: an integer from 1");
  check({"max_batch=-1"}, "parameter 'max_batch'");
  check({"requests=0"}, "parameter 'requests'");
  check({"prompt=0"}, "parameter 'prompt'");
  check({"max_output=0"}, "parameter 'max_output'");
  check({"mean_output=0"}, "parameter 'mean_output'");
  check({"k=0"}, "parameter 'k'");
  check({"delay_ms=-1"}, "parameter 'delay_ms'");
  check({"prompt=600"},
        "parameter 'prompt': value '600' is not allowed: a prompt must be shorter than the model's context of 512 "
        "tokens");
  check({"prompt=500", "max_output=20"},
        "parameter 'max_output': value '20' is not allowed with prompt = 500: prompt + output must fit the model's "
        "context of 512 tokens; allowed: 1 to 12");
  check({"mean_output=200", "max_output=100"}, "parameter 'mean_output': value '200' is not allowed above max_output");
  check(
      {"draft_layers=5", "layers=4"},
      "parameter 'draft_layers': value '5' is not allowed with layers = 4: the draft must be smaller than the target");
  check({"draft_layers=4", "layers=4"}, "allowed: 1 to 3");
  check({"layers=1"}, "set draft = off or raise layers");
  check({"d_model=100", "heads=8"}, "parameter 'd_model': value '100' is not allowed with heads = 8");
  check({"policy=fifo"}, "one of: static, adaptive, continuous");
  check({"draft=maybe"}, "parameter 'draft'");
  check({"d_model=2048", "layers=64", "context=65536", "max_batch=64"}, "of host memory is available");
  check({"requests=4096", "rate=0.01"}, "max_minutes");
}

TEST_CASE("serving: on the CUDA backend, a model that does not fit GPU 0's free memory is refused, naming sizes") {
  const Lesson& lesson = find_lesson("serving");
  const ParamValues p = ParamValues::defaults(lesson.params());
  CHECK(lesson.runs_on_cuda());
  // Without a GPU, 0 bytes are free: every model is refused for GPU memory, with the parameters named.
  if (!cuda_status().available)
    CHECK_THROWS_WITH_AS(lesson.validate(p, BackendKind::Cuda), doctest::Contains("of GPU memory"), BadInput);
  ParamValues huge = p;
  huge.set(lesson.params(), "max_batch", "64");
  huge.set(lesson.params(), "context", "65536");
  huge.set(lesson.params(), "d_model", "2048");
  huge.set(lesson.params(), "layers", "64");
  // Refused on either backend (host memory, or GPU memory first when a GPU answers), the sizes named.
  CHECK_THROWS_WITH_AS(lesson.validate(huge, BackendKind::Cuda), doctest::Contains("'max_batch' = 64"), BadInput);
  CHECK_NOTHROW(lesson.validate(p, BackendKind::Cpu));
  ParamValues off = p;
  off.set(lesson.params(), "draft", "off");
  off.set(lesson.params(), "layers", "1");
  CHECK_NOTHROW(lesson.validate(off, BackendKind::Cpu));  // no draft, no draft-size rule
}

TEST_CASE("serving theory: intensities about the tokens in flight, the course's 1,000 + 200 example") {
  const serving::ServingTheory t = [] {
    const ServingLesson lesson;
    ParamValues p = ParamValues::defaults(lesson.params());
    p.set(lesson.params(), "prompt", "128");
    p.set(lesson.params(), "max_batch", "8");
    return lesson.theory_of(lesson.read_params(p));
  }();
  CHECK(t.prefill_intensity == 128);
  CHECK(t.decode_intensity == 8);
  CHECK(t.decode_intensity_batch1 == 1);
  CHECK(t.prefill_intensity_fp32 == 64);
  CHECK(t.decode_intensity_fp32 == 4);
  CHECK(t.example_first_attends == 1000);
  CHECK(t.example_last_attends == 1199);
  CHECK(t.example_bytes_per_token == 524288);
  CHECK(t.example_first_kv_bytes == 524288000LL);
  CHECK(t.example_last_kv_bytes == 628621312LL);
  CHECK(t.kv_bytes_per_token == 2 * 4 * 128 * 4);  // 2 x layers x d_model x 4 bytes
  // 2 vocab d + context d + layers (4 d^2 + 2 d 4d) at d = 128, 4 layers, vocab 256, context 512.
  CHECK(t.parameters == 2 * 256 * 128 + 512 * 128 + 4 * (4 * 128 * 128 + 2 * 128 * 512));
}

TEST_CASE("serving run: the documented keys, identical tokens, and the report's benchmark line") {
  const auto r = run_serving(small());
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto json = nlohmann::json::parse(r.out);
  const auto& t = json["theory"];
  CHECK(t["prefill_intensity"] == 8);
  CHECK(t["decode_intensity"] == 4);
  const auto& m = json["measured"];
  for (const char* key : {"ttft_ms_p50", "tpot_ms_p50", "latency_ms_p50", "latency_ms_p99", "tokens_per_s",
                          "padding_fraction", "acceptance_rate", "speculative_speedup"}) {
    INFO(key);
    REQUIRE(m.contains(key));
    CHECK(m[key].get<double>() >= 0);
  }
  CHECK(m["tokens_identical"] == true);
  CHECK(m["device"] == "cpu");
  CHECK_FALSE(m.contains("cpu_match_fraction"));  // only a GPU run compares its tokens with the CPU model's
  CHECK(m["policy"] == "continuous");
  CHECK(m["tokens_per_s"].get<double>() > 0);
  CHECK(m["latency_ms_p99"].get<double>() >= m["latency_ms_p50"].get<double>());
  REQUIRE(m["policies"].size() == 3);
  CHECK(m["policies"][0]["policy"] == "static");
  CHECK(m["policies"][0]["padding_fraction"] == m["policies"][0]["padding_fraction_closed_form"]);
  CHECK(m["policies"][2]["padding_fraction"] == 0);
  CHECK(m["curve"].size() == 9);
  const auto& spec = m["speculative"];
  CHECK(spec["identical"] == true);
  // The rate the formula takes: one rejection per pass that had one, the proposals after it untested.
  const double accepted = spec["accepted"].get<double>(), rejections = spec["rejections"].get<double>();
  CHECK(rejections <= spec["target_passes"].get<double>());
  CHECK(spec["acceptance_rate"].get<double>() == doctest::Approx(accepted / (accepted + rejections)));
  CHECK(m["acceptance_rate"] == spec["acceptance_rate"]);
  // Tokens are deterministic (seeded weights and stream), so this is not a timing: the measured tokens per pass
  // agree with (1 - a^(k+1)) / (1 - a) at that rate.
  CHECK(spec["tokens_per_target_pass"].get<double>() ==
        doctest::Approx(spec["expected_tokens_per_pass"].get<double>()).epsilon(0.15));
  CHECK(json["timeline"].is_null() == false);
  const auto text = run_serving(small(), false);
  REQUIRE(text.code == 0);
  CHECK(text.out.find("continuous / static throughput = ") != std::string::npos);
  CHECK(text.out.find("not the default stream") != std::string::npos);
  CHECK(m["default_stream"] == false);
  CHECK(text.out.find("tokens identical across every policy, batch and rate: yes") != std::string::npos);
}

TEST_CASE("serving run: draft = off leaves the speculative keys out; policy picks the headline numbers") {
  const auto r = run_serving(small({"draft=off", "policy=static"}));
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto m = nlohmann::json::parse(r.out)["measured"];
  CHECK_FALSE(m.contains("acceptance_rate"));
  CHECK_FALSE(m.contains("speculative_speedup"));
  CHECK(m["policy"] == "static");
  CHECK(m["tokens_per_s"] == m["policies"][0]["tokens_per_s"]);
  CHECK(m["padding_fraction"] == m["policies"][0]["padding_fraction"]);
}
