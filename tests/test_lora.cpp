// The LoRA lesson: the adapters' closed forms (the course's d = k = 4096 numbers, QLoRA's bits per parameter), the
// training kernel against them (trainable counts, every ledger tag, the merged weight against the adapter path, the
// least rank-r loss), the knee at the true rank in a --quick run, the real-model calculator and bad input.
#include <doctest/doctest.h>

#include <cmath>

#include "engine/errors.h"
#include "kernels/lora/lora.h"
#include "kernels/quant/quantize.h"
#include "lessons/common/run_lesson.h"
#include "lessons/kvcache/model_config.h"
#include "lessons/lora/lora_calculator.h"
#include "lessons/lora/lora_lesson.h"
#include "tests/support/cli_capture.h"
#include "tests/support/typed_values.h"

using namespace dlsys;
using namespace dlsys::lora;
using namespace dlsys::lora_lesson;

namespace {

const std::vector<std::string> kQuick = {"d=64", "k=64", "steps=150"};

std::vector<std::string> quick_with(std::vector<std::string> sets) {
  std::vector<std::string> all = kQuick;
  all.insert(all.end(), sets.begin(), sets.end());
  return all;
}

}  // namespace

TEST_CASE("lora: trainable parameters r (d + k), the course's d = k = 4096 numbers") {
  CHECK(lora_parameters(4096, 4096, 8) == 65536);
  CHECK(lora_parameters(4096, 4096, 8) == 2 * 4096 * 8);  // 2 d r when square
  CHECK(lora_parameters(512, 256, 4) == 4 * (512 + 256));
  const LoraLesson lesson;
  const LoraTheory t = test::typed_theory(lesson, {});
  CHECK(t.course_full == 16777216);
  CHECK(t.course_r8 == 65536);
  CHECK(t.course_r8_percent == 0.390625);  // the course's 0.39 %
  CHECK(t.course_r16 == 131072);
  CHECK(t.course_r16_percent == 0.78125);  // and 0.78 %
  CHECK(t.full_trainable == 512 * 256);
  CHECK(t.trainable_by_rank == std::vector<std::int64_t>{768, 1536, 3072, 6144, 12288});
  CHECK(t.trainable_at_r == 8 * 768);
  // Inference is timed on a 1024-square layer: r (d + k) / (d k) = r 2048 / 2^20.
  CHECK(t.inference_width == 1024);
  CHECK(t.adapter_flop_share_by_rank == std::vector<double>{1.0 / 512, 2.0 / 512, 4.0 / 512, 8.0 / 512, 16.0 / 512});
}

TEST_CASE("lora: QLoRA's frozen base, bits per parameter with and without double quantization") {
  const LoraTheory t = test::typed_theory(LoraLesson{}, {});  // d = 512, k = 256
  CHECK(t.nf4_scale_bits == 0.5);                             // 32 / 64
  CHECK(t.nf4_double_quant_scale_bits == 0.126953125);        // 8 / 64 + 32 / (64 x 256)
  CHECK(t.double_quant_saving_bits == 0.373046875);           // Dettmers et al. 2023: about 0.37
  CHECK(nf4_double_quant_bytes(4096, 4096) == 8388608 + 262144 + 4 * 1024 + 4);
  CHECK(8.0 * double(nf4_double_quant_bytes(4096, 4096)) / (4096.0 * 4096) ==
        4 + 0.5 / 4 + 32.0 / (64 * 256) + 32.0 / (4096.0 * 4096));  // codes, 8-bit scales, 32-bit ones, the mean
  CHECK(t.nf4_base_bits_per_parameter == 8.0 * (512 * 128 + 512 * 4 + 4 * 8 + 4) / (512.0 * 256));
  // The closed form is what the quant kernel stores: codes, 8-bit scale codes, second-level scales and their mean.
  std::vector<float> w(std::size_t(96 * 200));
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = std::sin(float(i));
  const quant::QuantizedMatrix q =
      quant::quantize(w.data(), 96, 200, {quant::Scheme::Nf4, quant::Granularity::Block, 4, 64, true});
  CHECK(std::int64_t(q.codes.size() + q.scale_codes.size() + 4 * q.second_scales.size() + 4) ==
        nf4_double_quant_bytes(96, 200));
}

TEST_CASE("quant: dequantizing a panel of rows gives those rows of the whole matrix") {
  std::vector<float> w(std::size_t(40 * 130));
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = std::cos(0.37f * float(i));
  const quant::QuantizedMatrix q =
      quant::quantize(w.data(), 40, 130, {quant::Scheme::Nf4, quant::Granularity::Block, 4, 64, true});
  std::vector<float> whole(w.size()), panel(std::size_t(7 * 130));
  quant::dequantize(q, whole.data());
  quant::dequantize_rows(q, 16, 23, panel.data());
  for (std::size_t i = 0; i < panel.size(); ++i) REQUIRE(panel[i] == whole[16 * 130 + i]);
}

TEST_CASE("lora kernel: singular values of a known matrix, and the least rank-r loss") {
  // Rows scaled 3, 2, 1 of an orthonormal pair of columns rotated by 45 degrees: singular values 3, 2, 1.
  const double s = std::sqrt(0.5);
  const std::vector<double> m{3 * s, 3 * s, 0, -2 * s, 2 * s, 0, 0, 0, 1};
  const std::vector<double> sigma = singular_values(m, 3, 3);
  REQUIRE(sigma.size() == 3);
  CHECK(sigma[0] == doctest::Approx(3).epsilon(1e-12));
  CHECK(sigma[1] == doctest::Approx(2).epsilon(1e-12));
  CHECK(sigma[2] == doctest::Approx(1).epsilon(1e-12));
  CHECK(eckart_young_loss(sigma, 1, 3) == doctest::Approx((4.0 + 1.0) / 3));
  CHECK(eckart_young_loss(sigma, 3, 3) == 0);
  // The task's update has singular values in the ratio 4 : 3 : 2 : 1 and a loss of 1.
  const Problem p = make_problem(48, 32, 4, 0.0, 3);
  const std::vector<double> gap = singular_values(target_gap(p, p.w), p.d, p.k);
  CHECK(gap[0] / gap[3] == doctest::Approx(4).epsilon(1e-4));
  CHECK(gap[1] / gap[3] == doctest::Approx(3).epsilon(1e-4));
  CHECK(eckart_young_loss(gap, 0, p.d) == doctest::Approx(1).epsilon(1e-5));
  CHECK(gap[4] < 1e-5 * gap[0]);
}

TEST_CASE("lora kernel: every training's ledger is its closed form; the adapters start at W' = W") {
  const Problem p = make_problem(48, 32, 4, 1e-3, 5);
  for (Method method : {Method::Full, Method::Lora, Method::Qlora}) {
    CAPTURE(method_name(method));
    const TrainConfig config{.method = method, .r = 3, .alpha = 6, .steps = 5, .learning_rate = 1e-2f};
    const TrainResult r = train(p, config);
    const MethodBytes expected = method_bytes(method, 48, 32, 32, 3);
    CHECK(r.trainable_parameters == (method == Method::Full ? 48 * 32 : 3 * (48 + 32)));
    CHECK(r.peak_bytes.frozen == expected.frozen);
    CHECK(r.peak_bytes.trainable == expected.trainable);
    CHECK(r.peak_bytes.gradients == expected.gradients);
    CHECK(r.peak_bytes.optimizer == expected.optimizer);
    CHECK(r.peak_bytes.optimizer == kAdamStateBytesPerParameter * r.trainable_parameters);
    CHECK(r.peak_bytes.activations == expected.activations);
    CHECK(r.peak_bytes.workspace == expected.workspace);
    CHECK(r.ledger_total_peak_bytes == expected.total());  // everything is held at once
    CHECK(r.loss.size() == 6);
    CHECK(r.step_time.repeats == 4);  // the first step is not timed
    CHECK(r.final_loss() < r.loss.front());
  }
  // B = 0 at the start: LoRA's first loss is the frozen W's, to the bit, and it is ||W - W*||^2 / d.
  const TrainResult full = train(p, {.method = Method::Full, .steps = 2});
  const TrainResult lora = train(p, {.method = Method::Lora, .r = 2, .steps = 2});
  CHECK(lora.loss.front() == full.loss.front());
  double gap = 0;
  for (std::size_t i = 0; i < p.w.size(); ++i) gap += std::pow(double(p.w_target[i]) - p.w[i], 2);
  CHECK(full.loss.front() == doctest::Approx(gap / 48).epsilon(1e-5));
}

TEST_CASE("lora kernel: the merged weight W + (alpha / r) B A gives the adapter path's outputs") {
  const Problem p = make_problem(40, 24, 2, 1e-3, 9);
  const TrainResult r = train(p, {.method = Method::Lora, .r = 4, .alpha = 8, .steps = 20});
  CHECK(r.merge.agrees());
  CHECK(r.merge.max_abs_diff < 1e-4);
  // A merge with the wrong scale is caught: the check can fail.
  std::vector<float> b(40 * 2, 0.5f), a(2 * 24, 0.25f);
  const std::vector<float> right = merged_weight(p.w.data(), b.data(), a.data(), 2.0f, 40, 24, 2);
  const std::vector<float> unscaled = merged_weight(p.w.data(), b.data(), a.data(), 1.0f, 40, 24, 2);
  CHECK(check_merged(p.w.data(), right.data(), b.data(), a.data(), 2.0f, p.xt.data(), 40, 24, 2, 24).agrees());
  const MergeCheck wrong =
      check_merged(p.w.data(), unscaled.data(), b.data(), a.data(), 2.0f, p.xt.data(), 40, 24, 2, 24);
  CHECK_FALSE(wrong.agrees());
  CHECK(wrong.worst_share_of_bound > 100);
}

TEST_CASE("lora kernel: the inference layer's outputs from elsewhere are held to the adapter path's rounding bound") {
  const InferenceLayer layer = make_inference_layer(37, 53, 19, 3, 8.0f / 3);
  CHECK(layer.merged == merged_weight(layer.w.data(), layer.b.data(), layer.a.data(), layer.scale, 37, 53, 3));
  // The merged weight's outputs, computed here in double and rounded once: within the bound, a small share of it.
  std::vector<float> merged_out(std::size_t(37 * 19)), unscaled_out(merged_out.size());
  const std::vector<float> unscaled =
      merged_weight(layer.w.data(), layer.b.data(), layer.a.data(), 1.0f, 37, 53, 3);  // the scale forgotten
  for (int i = 0; i < 37; ++i)
    for (int j = 0; j < 19; ++j) {
      double sum = 0, sum_unscaled = 0;
      for (int p = 0; p < 53; ++p) {
        sum += double(layer.merged[std::size_t(i * 53 + p)]) * layer.xt[std::size_t(p * 19 + j)];
        sum_unscaled += double(unscaled[std::size_t(i * 53 + p)]) * layer.xt[std::size_t(p * 19 + j)];
      }
      merged_out[std::size_t(i * 19 + j)] = float(sum);
      unscaled_out[std::size_t(i * 19 + j)] = float(sum_unscaled);
    }
  const MergeCheck right = check_outputs(layer, {merged_out.data()});
  CHECK(right.agrees());
  CHECK(right.max_abs_diff < 1e-5);
  const MergeCheck wrong = check_outputs(layer, {unscaled_out.data()});
  CHECK_FALSE(wrong.agrees());
  // Of several outputs, the worst is reported.
  CHECK(check_outputs(layer, {merged_out.data(), unscaled_out.data()}).max_abs_diff == wrong.max_abs_diff);
  // The layer's own timing runs the same check as before on the same seeded numbers.
  const ForwardTiming by_layer = time_adapter_forward(layer, {.warmup = 0, .repeats = 1});
  const ForwardTiming by_sizes = time_adapter_forward(37, 53, 19, 3, 8.0f / 3, {.warmup = 0, .repeats = 1});
  CHECK(by_layer.check.max_abs_diff == by_sizes.check.max_abs_diff);
  CHECK(by_layer.check.agrees());
}

TEST_CASE("lora lesson: a --quick run has its knee at the true rank, ledgers equal to the closed forms") {
  const LoraLesson lesson;
  RunControl control;
  for (int true_rank : {4, 2}) {
    CAPTURE(true_rank);
    const auto sets = quick_with({"true_rank=" + std::to_string(true_rank)});
    const RunResult run = run_lesson(lesson, ParamValues::parse(lesson.params(), sets), BackendKind::Cpu, control);
    const LoraMeasured& m = test::measured_of<LoraMeasured>(run);
    CHECK(m.knee_rank == true_rank);
    CHECK(m.knee_at_true_rank);
    CHECK(m.all_ledgers_match);
    CHECK(m.all_merges_agree);
    REQUIRE(m.trainings.size() == 8);
    CHECK(m.trainings[0].final_loss < 1e-3 * m.trainings[0].initial_loss);  // full fine-tuning fits everything
    for (std::size_t i = 1; i <= 5; ++i) {
      const TrainingRun& t = m.trainings[i];
      CAPTURE(t.r);
      CHECK(t.trainable_parameters == std::int64_t(t.r) * (64 + 64));
      // Below the true rank LoRA finds the best rank-r update: Eckart-Young's least loss, within 1 %.
      if (t.r < true_rank) CHECK(t.final_loss == doctest::Approx(t.best_rank_r_loss).epsilon(0.01));
      CHECK(t.final_loss >= t.best_rank_r_loss * (1 - 1e-4));
    }
    CHECK(m.trainings[6].method == "qlora");
    CHECK(m.qlora_over_lora_final_loss > 1);  // the 4-bit base's error is a floor the adapters cannot all absorb
    CHECK(m.trainings[6].ledger.frozen_bytes == nf4_double_quant_bytes(64, 64));
    CHECK(m.trainings[6].ledger.total_bytes < m.trainings[7].ledger.total_bytes);
    // Inference: the adapter path and the merged weight agree, and its extra multiply-adds are r (d + k) / (d k).
    REQUIRE(m.forward.size() == kSweptRanks.size());
    for (const ForwardPoint& f : m.forward) {
      CHECK(f.agrees);
      CHECK(f.flop_share == double(f.r) * 2048 / (1024 * 1024));
      CHECK(f.adapter_us > 0);
      CHECK(f.merged_us > 0);
      CHECK(f.repeats >= 9);
      // On the CPU the adapter's own products are timed alone as well, one point a rank.
      REQUIRE(f.products_share.has_value());
      CHECK(*f.products_share > 0);
    }
    const Series* products = run.find_series("forward_adapter_products");
    REQUIRE(products != nullptr);
    CHECK(products->points.size() == kSweptRanks.size());
    if (true_rank == 4) {
      // Read back from its JSON through the same declarations.
      const nlohmann::ordered_json json = to_json(run);
      RunResult back;
      lesson.read_values(json.at("theory"), json.at("measured"), back);
      CHECK(test::measured_of<LoraMeasured>(back).knee_rank == 4);
      CHECK(test::measured_of<LoraMeasured>(back).forward.back().products_share == m.forward.back().products_share);
      REQUIRE(back.theory_as<LoraTheory>() != nullptr);
      CHECK(back.theory_as<LoraTheory>()->course_r8 == 65536);
    }
  }
}

TEST_CASE("lora lesson: on a GPU the timed inference layer is 4096 wide, where launches no longer set the time") {
  const LoraLesson lesson;
  for (const bool quick : {false, true}) {
    CAPTURE(quick);
    const auto values = lesson.theory(ParamValues::parse(lesson.params(), lesson.gpu_params(quick)));
    const LoraTheory* theory = values_as<LoraTheory>(values);
    REQUIRE(theory != nullptr);
    CHECK(theory->inference_width == 4096);
    CHECK(theory->inference_tokens == (quick ? 512 : 1024));
    for (std::size_t i = 0; i < kSweptRanks.size(); ++i)
      CHECK(theory->adapter_flop_share_by_rank[i] == double(kSweptRanks[i]) * 2 * 4096 / (4096.0 * 4096.0));
  }
  // The CPU keeps the 1024-wide layer of 256 tokens.
  const auto cpu_values = lesson.theory(ParamValues::parse(lesson.params(), {}));
  const LoraTheory* cpu = values_as<LoraTheory>(cpu_values);
  REQUIRE(cpu != nullptr);
  CHECK(cpu->inference_width == 1024);
  CHECK(cpu->inference_tokens == 256);
}

TEST_CASE("lora calculator: Llama-2-7B's adapters and memory, exactly") {
  const kvcache::ModelConfig llama = kvcache::load_preset("llama-2-7b");
  const CalculatorTheory qkvo = calculate(llama, "model", Targets::Attention, 8, 1, 512);
  CHECK(qkvo.adapter_parameters == 32.0 * 4 * 65536);  // 8,388,608
  CHECK(qkvo.parameters == 6738415616.0);
  const CalculatorTheory all = calculate(llama, "model", Targets::AllLinear, 8, 1, 512);
  CHECK(all.adapter_parameters == 32.0 * (4 * 65536 + 3 * 8 * (4096 + 11008)));  // 19,988,480
  CHECK(all.linear_parameters == 32.0 * (4 * 4096.0 * 4096 + 3 * 4096.0 * 11008));
  REQUIRE(all.memory.size() == 3);
  const ModelMemory& full = all.memory[0];
  const ModelMemory& lora = all.memory[1];
  const ModelMemory& qlora = all.memory[2];
  CHECK(full.weight_bytes + full.gradient_bytes + full.optimizer_bytes == 16 * all.parameters);  // 2 + 2 + 12
  CHECK(lora.gradient_bytes == 2 * all.adapter_parameters);
  CHECK(lora.optimizer_bytes == 12 * all.adapter_parameters);
  CHECK(lora.weight_bytes == 2 * all.parameters + 2 * all.adapter_parameters);
  const double nf4 =
      32.0 * (4 * double(nf4_double_quant_bytes(4096, 4096)) + 2 * double(nf4_double_quant_bytes(11008, 4096)) +
              double(nf4_double_quant_bytes(4096, 11008)));
  CHECK(qlora.weight_bytes == nf4 + 2 * (all.parameters - all.linear_parameters) + 2 * all.adapter_parameters);
  // Activations do not shrink: the base's, plus the adapters' r-wide hidden values.
  CHECK(lora.activation_bytes == full.activation_bytes + all.adapter_activation_bytes);
  CHECK(qlora.activation_bytes == lora.activation_bytes);
  CHECK(all.adapter_activation_bytes == 32.0 * 7 * 2 * 512 * 8);
  // A mixture of experts is refused by name.
  CHECK_THROWS_WITH_AS(calculate(kvcache::load_preset("mixtral-8x7b"), "model", Targets::Attention, 8, 1, 512),
                       doctest::Contains("parameter 'model'"), BadInput);
}

TEST_CASE("lora lesson: bad input is refused naming the parameter") {
  const auto check = testing::refusal_check("lora");
  check(quick_with({"r=65"}), "parameter 'r': value '65' is above min(d, k) = 64");
  check(quick_with({"d=8"}), "parameter 'd'");
  check(quick_with({"k=100000"}), "parameter 'k'");
  check(quick_with({"steps=1"}), "parameter 'steps'");
  check(quick_with({"alpha=0"}), "parameter 'alpha'");
  check(quick_with({"model=deepseek-v3"}), "parameter 'model'");
  check(quick_with({"targets=mlp"}), "parameter 'targets'");
  check(quick_with({"config=/nonexistent/config.json"}), "parameter 'config'");
}
