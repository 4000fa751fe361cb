// `dlsys-lab run precision` in-process: the documented JSON keys with exact values, a value rounded with its bits, the
// four trainings (with the default problem's outcome the lesson teaches), and bad input exiting 2 with its reason.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/backend.h"
#include "engine/errors.h"
#include "engine/params.h"
#include "kernels/precision/mixed_precision_mlp.h"
#include "lessons/precision/precision_problem.h"
#include "lessons/precision/precision_steps.h"
#include "lessons/registry.h"
#include "tests/support/cli_capture.h"

using namespace dlsys;

namespace {

testing::CliOutcome run_precision(const std::vector<std::string>& sets) {
  return testing::run_lesson_captured("precision", sets);
}

nlohmann::json json_of(const testing::CliOutcome& r) {
  INFO(r.err);
  REQUIRE(r.code == 0);
  return nlohmann::json::parse(r.out);
}

void expect_bad_input(const std::vector<std::string>& sets, const std::string& expected) {
  testing::check_refused(run_precision(sets), expected);
}

}  // namespace

TEST_CASE("run precision --set round: the rounded value and its bits, and the format's limits as theory") {
  const auto j = json_of(run_precision({"round=65519", "format=fp16"}));
  CHECK(j["measured"]["rounded"] == 65504.0);
  CHECK(j["measured"]["bits_hex"] == "0x7bff");
  CHECK(j["measured"]["bit_fields"] == "0 11110 1111111111");
  const auto& t = j["theory"];
  CHECK(t["max_finite"] == 65504.0);
  CHECK(t["min_normal"] == 6.103515625e-05);
  CHECK(t["min_subnormal"] == 5.9604644775390625e-08);
  CHECK(t["epsilon"] == 0.0009765625);
  CHECK(j["series"].empty());

  const auto bf16 = json_of(run_precision({"round=0.1", "format=bf16"}));
  CHECK(bf16["measured"]["bits_hex"] == "0x3dcd");
  CHECK(bf16["measured"]["rounded"] == 0.10009765625);
  CHECK(bf16["theory"]["max_finite"] == 3.3895313892515355e38);
  CHECK(bf16["theory"]["min_subnormal"] == std::ldexp(1.0, -133));

  const auto fp32 = json_of(run_precision({"round=0.1", "format=fp32"}));
  CHECK(fp32["measured"]["bits_hex"] == "0x3dcccccd");
  CHECK(fp32["measured"]["rounded"] == double(0.1f));

  const auto tiny = json_of(run_precision({"round=1e-8", "format=fp16"}));
  CHECK(tiny["measured"]["rounded"] == 0.0);
  CHECK(tiny["measured"]["flushed"] == true);
  const auto huge = json_of(run_precision({"round=-70000", "format=fp16"}));
  CHECK(huge["measured"]["bits_hex"] == "0xfc00");
  CHECK(huge["measured"]["overflow"] == true);
}

TEST_CASE("run precision prints the rounded value and its bits in words") {
  const testing::CliOutcome r = testing::run_lesson_captured("precision", {"round=1.00048828125"}, false);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("0 01111 0000000000  (0x3c00)") != std::string::npos);
  CHECK(r.out.find("rounded to the even one") != std::string::npos);
}

TEST_CASE("run precision trains four ways: the keys, the scale trace and GradScaler's first steps") {
  const auto j = json_of(run_precision({"steps=12"}));
  const auto& m = j["measured"];
  for (const char* key : {"final_loss", "underflow_fraction", "skipped_steps", "scale_trace", "fp32_final_loss",
                          "fp16_unscaled_final_loss", "fp16_scaled_final_loss", "bf16_final_loss"})
    CHECK_MESSAGE(m.contains(key), key);
  REQUIRE(m["scale_trace"].size() == 12);
  // The default growth_interval is 5: the scale doubles after steps 5 and 10 while no gradient overflows.
  CHECK(m["scale_trace"][0] == 65536.0);
  CHECK(m["scale_trace"][3] == 65536.0);
  CHECK(m["scale_trace"][4] == 131072.0);
  CHECK(m["scale_trace"][9] == 262144.0);
  CHECK(m["skipped_steps"] == 0);
  CHECK(m["fp32_underflow_fraction"] == 0.0);
  CHECK(m["fp16_unscaled_underflow_fraction"].get<double>() > 0.5);
  CHECK(j["theory"]["growth_interval"] == 5);
  CHECK(j["theory"]["pytorch_growth_interval"] == 2000);
  CHECK(j["theory"]["bytes_per_parameter"] == 16);
  CHECK(j["theory"]["parameters"] == 6288);
  CHECK(j["theory"]["allreduce_bytes_fp32_7b"] == 49e9);
  CHECK(j["theory"]["allreduce_bytes_16bit_7b"] == 24.5e9);
  std::vector<std::string> ids;
  for (const auto& s : j["series"]) ids.push_back(s["id"]);
  for (const char* id : {"loss_fp32", "loss_fp16_unscaled", "loss_fp16_scaled", "loss_bf16", "scale_fp16_scaled",
                         "grad_hist_first", "grad_hist_last", "flushed_vs_scale_first"})
    CHECK_MESSAGE(std::find(ids.begin(), ids.end(), id) != ids.end(), id);
}

TEST_CASE("the default problem: fp16 without scaling loses its gradients, with GradScaler it follows fp32") {
  const auto j = json_of(run_precision({}));
  const auto& m = j["measured"];
  CHECK(m["fp16_unscaled_final_loss"].get<double>() >= 10 * m["fp32_final_loss"].get<double>());
  CHECK(std::fabs(m["fp16_scaled_final_loss"].get<double>() / m["fp32_final_loss"].get<double>() - 1) <= 0.05);
  CHECK(m["unscaled_as_expected"] == true);
  CHECK(m["scaled_as_expected"] == true);
  CHECK(m["skipped_steps"].get<int>() >= 1);  // the scaler climbs into at least one overflow in 200 steps
  CHECK(m["fp16_unscaled_underflow_fraction"].get<double>() > 0.99);
  CHECK(m["fp16_scaled_underflow_fraction"].get<double>() < 0.01);
}

TEST_CASE("scaling by powers of two is exact in fp32: an fp32 run with a loss scale trains bit for bit the same") {
  const precision::Problem problem = precision::make_problem(precision::precision_problem_spec());
  precision::TrainOptions plain{.steps = 30, .learning_rate = 0.01};
  plain.loss_weight = 0.0001220703125;
  precision::TrainOptions scaled = plain;
  scaled.scaling = true;
  scaled.scaler.growth_interval = 5;
  const precision::TrainResult a = precision::train_mlp(problem, plain), b = precision::train_mlp(problem, scaled);
  CHECK(a.final_loss == b.final_loss);
  for (std::size_t i = 0; i < a.steps.size(); ++i) CHECK(a.steps[i].loss == b.steps[i].loss);
}

TEST_CASE("run precision: bad input exits 2 naming the parameter, the value and what is allowed") {
  expect_bad_input({"format=fp8"}, "parameter 'format': value 'fp8'");
  expect_bad_input({"scaling=maybe"}, "parameter 'scaling'");
  expect_bad_input({"round=abc"}, "parameter 'round': value 'abc' is not a number");
  expect_bad_input({"round=nan"}, "parameter 'round': value 'nan'");
  expect_bad_input({"round=inf"}, "parameter 'round': value 'inf'");
  expect_bad_input({"round=1e999"}, "within the double range");
  expect_bad_input({"steps=0"}, "parameter 'steps': value '0'");
  expect_bad_input({"steps=100000", "max_minutes=0.1"}, "max_minutes");
}

TEST_CASE("precision on the CUDA backend refuses a GEMM larger than the GPU's free memory") {
  const Lesson& lesson = find_lesson("precision");
  const ParamValues params = ParamValues::defaults(lesson.params());
  if (!cuda_status().available)  // no GPU answers here: 0 bytes free
    CHECK_THROWS_WITH_AS(lesson.validate(params, BackendKind::Cuda), doctest::Contains("of GPU memory but GPU 0 has"),
                         BadInput);
  CHECK_NOTHROW(lesson.validate(params, BackendKind::Cpu));
}

TEST_CASE("precision's step data: limits shown exactly, the chosen format first, the update that vanishes") {
  const Lesson& lesson = find_lesson("precision");
  const ParamValues params = ParamValues::parse(lesson.params(), {"format=fp16", "round=0.2"});
  const auto steps = std::dynamic_pointer_cast<const precision::PrecisionSteps>(lesson.step_data(params));
  REQUIRE(steps);
  REQUIRE(steps->cards.size() == 3);
  CHECK(steps->cards[0].name == "fp16");
  CHECK(steps->cards[0].limits[0].exact == "65504");
  CHECK(steps->cards[0].limits[0].bits == "0 11110 1111111111");
  CHECK(steps->cards[0].limits[2].exact == "5.9604644775390625e-8");
  CHECK(steps->rounding.front().input == "0.2");
  CHECK(steps->rounding.front().rounded == "0.199951171875");
  CHECK(steps->fp16_after == 1.0);
  CHECK(steps->bf16_after == 1.0);
  CHECK(steps->fp16_copy_after > 1.0);
  CHECK(steps->mlp_parameters == 6288);
}
