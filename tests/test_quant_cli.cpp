// `dlsys-lab run quant` in-process: the documented JSON keys with exact theory values, a small real run (every GEMV
// checked against its reference, the outlier step's ordering of errors), and bad input exiting 2 with its reason.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "engine/backend.h"
#include "engine/errors.h"
#include "engine/params.h"
#include "lessons/registry.h"
#include "tests/support/cli_capture.h"

using namespace dlsys;

namespace {

const std::vector<std::string> kSmall = {"n=256", "model_steps=5", "repeats=1", "threads=1"};

testing::CliOutcome run_quant(std::vector<std::string> sets) {
  std::vector<std::string> all = kSmall;
  all.insert(all.end(), sets.begin(), sets.end());
  return testing::run_lesson_captured("quant", all);
}

void expect_bad_input(const std::vector<std::string>& sets, const std::string& expected) {
  testing::check_refused(run_quant(sets), expected);
}

}  // namespace

TEST_CASE("run quant: the documented keys, exact bytes and overheads, and a real run checked against its references") {
  const testing::CliOutcome r = run_quant({"bits=4", "scheme=nf4", "granularity=block", "block=64", "double_quant=on"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto& t = j["theory"];
  CHECK(t["bytes_per_weight"] == 0.5);
  // 256 x 256 weights in blocks of 64: 1,024 scales of 8 bits, 4 second-level scales and a mean of 32 bits.
  CHECK(t["scale_overhead_bits_per_param"] == (1024.0 * 8 + 4 * 32 + 32) / 65536);
  CHECK(t["nf4_overhead_bits"] == 0.5);
  CHECK(t["nf4_double_quant_overhead_bits"] == 8.0 / 64 + 32.0 / (64 * 256));
  CHECK(t["model_7b_16bit_bytes"] == 14e9);
  CHECK(t["model_7b_8bit_bytes"] == 7e9);
  CHECK(t["model_7b_4bit_bytes"] == 3.5e9);
  CHECK(t["int8_smaller_than_fp32"] == 4);
  const auto& m = j["measured"];
  for (const char* key : {"weight_mse", "output_rel_err", "gemv_us", "fp32_gemv_us", "speedup"})
    CHECK_MESSAGE(m.contains(key), key);
  CHECK(m["weight_mse"].get<double>() > 0);
  CHECK(m["output_rel_err"].get<double>() > 0);
  CHECK(m["gemv_us"].get<double>() > 0);
  CHECK(m["speedup"].get<double>() == doctest::Approx(m["fp32_gemv_us"].get<double>() / m["gemv_us"].get<double>()));
  for (const char* key : {"fp32", "fp16", "int8", "int4", "chosen"}) {
    CAPTURE(key);
    CHECK(m[std::string(key) + "_wrong"] == false);
  }
  CHECK(m["int8_bytes_per_weight"].get<double>() > 1.0);  // the codes and a scale per row
  CHECK(m["int4_bytes_per_weight"] == 0.5 + 8.0 / 64);    // codes, and a scale and a zero point per block of 64
  // One outlier channel ruins a per-tensor scale; LLM.int8()'s split brings the error below even the clean per-tensor.
  CHECK(m["err_per_tensor_outlier"].get<double>() > 5 * m["err_per_tensor_clean"].get<double>());
  CHECK(m["err_llm_int8"].get<double>() < m["err_per_token_outlier"].get<double>());
  CHECK(m["split_columns"].get<int>() >= 1);
  CHECK(m["sparse_2_4_weight_rel_err"].get<double>() >= m["unstructured_half_weight_rel_err"].get<double>());
}

TEST_CASE("run quant: int8 per channel is the default, and its theory is one byte per weight") {
  const Lesson& lesson = find_lesson("quant");
  const ParamValues defaults = ParamValues::defaults(lesson.params());
  const auto theory = lesson.theory(defaults)->to_json();
  CHECK(theory["bits"] == 8);
  CHECK(theory["scheme"] == "absmax");
  CHECK(theory["granularity"] == "channel");
  CHECK(theory["bytes_per_weight"] == 1.0);
  CHECK(theory["scale_overhead_bits_per_param"] == 32.0 / 4096);
  CHECK(theory["n"] == 4096);
}

TEST_CASE("run quant: bad input exits 2 naming the parameter, the value and what is allowed") {
  expect_bad_input({"bits=1"}, "parameter 'bits': value '1'");
  expect_bad_input({"bits=9"}, "parameter 'bits': value '9'");
  expect_bad_input({"block=0"}, "parameter 'block': value '0'");
  expect_bad_input({"scheme=fp4"}, "parameter 'scheme': value 'fp4'");
  expect_bad_input({"granularity=row"}, "parameter 'granularity': value 'row'");
  expect_bad_input({"scheme=nf4", "bits=8"}, "with scheme nf4");
  expect_bad_input({"double_quant=on", "granularity=channel"}, "parameter 'double_quant'");
}

TEST_CASE("quant on the CUDA backend refuses a matrix larger than the GPU's free memory") {
  const Lesson& lesson = find_lesson("quant");
  const ParamValues params = ParamValues::defaults(lesson.params());
  if (!cuda_status().available)  // no GPU answers here: 0 bytes free
    CHECK_THROWS_WITH_AS(lesson.validate(params, BackendKind::Cuda), doctest::Contains("of GPU memory but GPU 0 has"),
                         BadInput);
}
