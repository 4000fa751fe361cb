// The checkpointing lesson: the widened block's gradients against central differences, a checkpointed step's ledger
// peak against the closed form and its gradients equal to the plain step's bit for bit at every k, the course's and
// the paper's worked numbers, bad input, and a real run.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/ledger.h"
#include "kernels/tensor/activation_memory.h"
#include "kernels/training/checkpointed_step.h"
#include "kernels/training/checkpointed_step_cuda.h"
#include "kernels/training/stack_layout.h"
#include "lessons/checkpointing/checkpointing_lesson.h"
#include "lessons/common/run_lesson.h"
#include "tests/support/cli_capture.h"
#include "tests/support/typed_values.h"

using namespace dlsys;
using namespace dlsys::training;

namespace {

double step_loss(const StackShape& shape, const std::vector<float>& weights, const DataSet& data, int k,
                 std::vector<float>& grads) {
  MemoryLedger ledger;
  return train_step(shape, weights.data(), data.inputs.data(), data.targets.data(), data.samples, k, ledger,
                    grads.data());
}

}  // namespace

TEST_CASE("checkpointing: the widened block's gradients match central differences of its loss") {
  const StackShape shape{.layers = 3, .width = 6, .expansion = 4};
  CHECK(parameter_count(shape) == 3 * 2 * 6 * 24);
  const DataSet data = make_data_set(shape, 5, 7);
  std::vector<float> weights = initial_weights(shape, 3);
  std::vector<float> grads(weights.size()), scratch(weights.size());
  step_loss(shape, weights, data, 3, grads);
  for (std::int64_t index : {std::int64_t(0), std::int64_t(150), std::int64_t(300), parameter_count(shape) - 1}) {
    const float saved = weights[std::size_t(index)];
    const float step = 1e-2f;
    weights[std::size_t(index)] = saved + step;
    const double up = step_loss(shape, weights, data, kKeepEverything, scratch);
    weights[std::size_t(index)] = saved - step;
    const double down = step_loss(shape, weights, data, kKeepEverything, scratch);
    weights[std::size_t(index)] = saved;
    CHECK(grads[std::size_t(index)] == doctest::Approx((up - down) / (2 * step)).epsilon(2e-2));
  }
}

TEST_CASE("checkpointing: at every k the ledger's peak is the closed form and the gradients are the plain step's") {
  const StackShape shape{.layers = 12, .width = 16, .expansion = 4};
  const int rows = 5;
  const DataSet data = make_data_set(shape, rows, 11);
  const std::vector<float> weights = initial_weights(shape, 11);
  std::vector<float> plain(weights.size()), grads(weights.size());
  MemoryLedger ledger;
  const double plain_loss = train_step(shape, weights.data(), data.inputs.data(), data.targets.data(), rows,
                                       kKeepEverything, ledger, plain.data());
  const std::int64_t boundary = 4 * rows * 16;
  CHECK(ledger.peak_bytes(kActivationTag) == (12 * 5 + 1) * boundary);
  CHECK(ledger.current_bytes(kActivationTag) == 0);
  for (int k : {1, 2, 3, 4, 6, 12}) {
    CAPTURE(k);
    ledger.reset_peaks();
    const double loss =
        train_step(shape, weights.data(), data.inputs.data(), data.targets.data(), rows, k, ledger, grads.data());
    CHECK(ledger.peak_bytes(kActivationTag) == (12 / k + 5 * k) * boundary);
    CHECK(ledger.peak_bytes(kActivationTag) == step_activation_peak_bytes(shape, rows, k));
    CHECK(ledger.current_bytes(kActivationTag) == 0);
    CHECK(loss == plain_loss);
    CHECK(std::memcmp(grads.data(), plain.data(), grads.size() * sizeof(float)) == 0);
  }
  // k = L keeps only the input and rebuilds everything: the plain step's peak, nothing saved.
  CHECK(step_activation_peak_bytes(shape, rows, 12) == step_activation_peak_bytes(shape, rows, kKeepEverything));
}

TEST_CASE("checkpointing: the course's L0, L3, L6 example and the closed forms at the defaults") {
  const CheckpointingLesson lesson;
  const checkpointing::CheckpointingTheory t = test::typed_theory(lesson, {});
  CHECK(t.layers == 48);
  CHECK(t.segment_layers == 3);
  CHECK(t.segments == 16);
  CHECK(t.boundary_bytes == 4 * 64 * 256);
  CHECK(t.layer_bytes == 5 * 65536);
  CHECK(t.keep_all_peak_bytes == 241 * 65536);     // 48 x 5 + 1 checkpoints' worth
  CHECK(t.checkpointed_peak_bytes == 31 * 65536);  // 16 + 3 x 5
  CHECK(t.best_k == 3);                            // L/k + 5k: 53, 34, 31, 32, 38, ... at k = 1, 2, 3, 4, 6
  CHECK(t.best_k_real == std::sqrt(48.0 / 5));
  CHECK(t.chen_best_k == std::sqrt(48.0));
  CHECK(t.divisors == std::vector<int>{1, 2, 3, 4, 6, 8, 12, 16, 24, 48});
  CHECK(t.time_ratio == 4.0 / 3.0);
  CHECK(t.backward_flop == 2 * t.forward_flop);
  const auto steps = lesson.step_data_of(test::typed_params(lesson, {}));
  REQUIRE(steps->backward.size() == 16);
  const checkpointing::KeptPicture& after = steps->after_forward;
  CHECK(after.layers[0] == checkpointing::Kept::Boundary);
  CHECK(after.layers[1] == checkpointing::Kept::Nothing);
  CHECK(after.layers[3] == checkpointing::Kept::Boundary);
  CHECK(after.layers[6] == checkpointing::Kept::Boundary);
  CHECK(after.bytes == 17 * 65536);
  CHECK(steps->backward.front().bytes == t.checkpointed_peak_bytes);  // the peak: the last segment, all checkpoints
  CHECK(steps->backward.front().layers[45] == checkpointing::Kept::Everything);
  CHECK(steps->backward.back().bytes == 65536 + 15 * 65536);
  // Chen's count, (L/k + k) whole layers, is least at sqrt(L) = 6.93; the stack's own curve at sqrt(L/5) = 3.1.
  const auto least = std::min_element(steps->chen_curve.points.begin(), steps->chen_curve.points.end(),
                                      [](const SeriesPoint& a, const SeriesPoint& b) { return a.y < b.y; });
  CHECK(least->x == doctest::Approx(std::sqrt(48.0)).epsilon(0.05));
}

TEST_CASE("checkpointing: selective recompute saves 80/114 of GPT-3 175B's activations at s = 2048") {
  const checkpointing::CalculatorTheory g = checkpointing::calculator_theory("gpt3", 96, 12288, 96, 2048, 1);
  const double sbh = 2048.0 * 12288;
  CHECK(g.layer_bytes_none == sbh * 114);  // 5 a s / h = 5 x 96 x 2048 / 12288 = 80
  CHECK(g.layer_bytes_selective == sbh * 34);
  CHECK(g.bytes_none == 96 * sbh * 114);
  CHECK(g.bytes_full == 96 * 2 * sbh + sbh * 114);
  CHECK(g.selective_saving == doctest::Approx(80.0 / 114).epsilon(1e-12));
  CHECK(g.selective_saving > 0.70);
  CHECK(g.selective_saving < 0.71);
  // Llama-2-7B (the default preset) at s = 4096, b = 1: h = 4096, a = 32, L = 32.
  const CheckpointingLesson lesson;
  const checkpointing::CalculatorTheory l = test::typed_theory(lesson, {}).calculator;
  const double llama_sbh = 4096.0 * 4096;
  CHECK(l.bytes_none == 32 * llama_sbh * (34 + 160));
  CHECK(l.bytes_selective == 32 * llama_sbh * 34);
  CHECK(l.bytes_full == 32 * 2 * llama_sbh + llama_sbh * 194);
  // The one formula the ZeRO calculator uses too.
  const tensor::LayerShape shape{.batch = 1, .seq = 4096, .hidden = 4096, .heads = 32};
  CHECK(tensor::model_activation_bytes(shape, 32, tensor::Recompute::Full) == l.bytes_full);
}

TEST_CASE("checkpointing: bad input exits 2 naming the parameter, the value and what is allowed") {
  const auto check = testing::refusal_check("checkpointing");
  check({"k=0"}, "parameter 'k': value '0' is not allowed (out of range); allowed: an integer from 1 to 96");
  check({"layers=6", "k=7"}, "parameter 'k': value '7' is more layers than the stack has (L = 6); allowed: 1 to L");
  check({"k=5"},
        "parameter 'k': value '5' does not divide L = 48, so the segments would differ in length; allowed: "
        "1, 2, 3, 4, 6, 8, 12, 16, 24, 48");
  check({"expansion=9"}, "parameter 'expansion': value '9' is not allowed");
  check({"config=/nonexistent/config.json"}, "parameter 'config'");
}

TEST_CASE("checkpointing: a run measures every k, the ledger equal to the formula, the gradients bit-identical") {
  const CheckpointingLesson lesson;
  RunControl control;
  const ParamValues params =
      ParamValues::parse(lesson.params(), {"layers=12", "k=3", "width=32", "rows=8", "repeats=1"});
  const RunResult run = run_lesson(lesson, params, BackendKind::Cpu, control);
  const auto& m = test::measured_of<checkpointing::CheckpointingMeasured>(run);
  CHECK(m.sweep.size() == 6);
  CHECK(m.peaks_match_formula);
  CHECK(m.all_gradients_identical);
  CHECK(m.measured_best_k == 2);  // 12/k + 5k: 17, 16, 19, 23, 32, 61 at k = 1, 2, 3, 4, 6, 12
  CHECK(m.keep_all_peak_bytes == (12 * 5 + 1) * 4 * 8 * 32);
  CHECK(m.checkpointed_peak_bytes == (4 + 15) * 4 * 8 * 32);
  CHECK(m.time_ratio > 0);
}

TEST_CASE("checkpointing's estimate: every step's FLOP at 64 GFLOP/s") {
  // Defaults: F = 4 r w (e w) L = 4 x 64 x 256 x 1024 x 48 a forward; 10 divisors of 48, 5 repeats: 11 checked plain
  // steps (3F), 10 checked checkpointed ones (4F), 6 forwards alone, and 10 x 6 timed pairs (7F): 499 F. The default
  // run took 21 s on the 2-core EPYC with other work beside it.
  const double forward = 4.0 * 64 * 256 * 1024 * 48;
  const CheckpointingLesson lesson;
  CHECK(checkpointing_cpu_run_seconds(test::typed_params(lesson, {}), BackendKind::Cpu) ==
        doctest::Approx(499 * forward / 64e9).epsilon(1e-12));
  // On CUDA the CPU runs the reference plain step alone.
  CHECK(checkpointing_cpu_run_seconds(test::typed_params(lesson, {}), BackendKind::Cuda) ==
        doctest::Approx(3 * forward / 64e9).epsilon(1e-12));
}

TEST_CASE("checkpointing: the device layout keeps the e = 1 blocks and holds what the CPU's Activations hold") {
  // e = 1 (the data-parallel and ZeRO trainers): input(l) at block 2l, hidden(l) at 2l + 1, the output at 2L.
  const StackLayout square{.shape = {.layers = 3, .width = 8, .expansion = 1}, .rows = 5};
  const std::int64_t block = 5 * 8;
  for (int l = 0; l < 3; ++l) {
    CHECK(square.input_offset(l) == 2 * l * block);
    CHECK(square.hidden_offset(l) == (2 * l + 1) * block);
  }
  CHECK(square.input_offset(3) == 6 * block);
  CHECK(square.floats() == 7 * block);
  CHECK(square.scratch_dz_offset() == block);
  CHECK(square.scratch_dx_offset() == 2 * block);
  CHECK(square.scratch_floats() == 3 * block);
  // e = 4: each layer r w (1 + e); with the first input outside, every offset r w less and the CPU's bytes.
  for (bool outside : {false, true}) {
    const StackShape shape{.layers = 3, .width = 8, .expansion = 4};
    const StackLayout wide{.shape = shape, .rows = 5, .first_input_outside = outside};
    const std::int64_t skipped = outside ? block : 0;
    INFO("first input outside: ", outside);
    for (int l = 0; l < 3; ++l) {
      if (l > 0 || !outside) CHECK(wide.input_offset(l) == l * 5 * block - skipped);
      CHECK(wide.hidden_offset(l) == (l * 5 + 1) * block - skipped);
      CHECK(wide.hidden_offset(l) + wide.hidden_floats() == wide.input_offset(l + 1));
    }
    CHECK(wide.input_offset(3) + block == wide.floats());
    CHECK(wide.scratch_floats() == 6 * block);
    float first = 0;
    const Activations cpu(shape, 5, outside ? &first : nullptr);
    CHECK(std::int64_t(sizeof(float)) * wide.floats() == cpu.bytes());
  }
  // The plain step holds the layout whole: its bytes are the closed form's keep-everything peak.
  const StackShape shape{.layers = 6, .width = 16, .expansion = 4};
  CHECK(4 * StackLayout{.shape = shape, .rows = 7}.floats() == step_activation_peak_bytes(shape, 7, kKeepEverything));
}

TEST_CASE("checkpointing on CUDA: the device bytes asked for, and a GPU run's check keys only in a GPU run's JSON") {
  // L = 4, w = 8, e = 2, r = 3: a boundary 24 floats, keep-all 4 x 72 + 24 = 312, a checkpointed step at k = 1 holds
  // 7 boundaries + a hidden layer = 168 + 48; 1024 weights x 2, the batch 48, scratch 96, the forward 312, twice 312.
  const StackShape shape{.layers = 4, .width = 8, .expansion = 2};
  CHECK(training::cuda::gpu_stack_floats(shape, 3) == 2 * 1024 + 48 + 96 + 312 + 2 * 312);
  CHECK(training::cuda::gpu_stack_bytes(shape, 3) ==
        4 * training::cuda::gpu_stack_floats(shape, 3) + training::cuda::kGpuStackMarginBytes);
  // One layer: the checkpointed forward's (L + 3) boundaries and a hidden layer outgrow the plain step's 1 + 1 + e.
  const StackShape one{.layers = 1, .width = 8, .expansion = 2};
  CHECK(training::cuda::gpu_stack_floats(one, 1) == 2 * 256 + 16 + 32 + 32 + 2 * (4 * 8 + 16));
  checkpointing::CheckpointingMeasured m;
  nlohmann::ordered_json cpu_json = m;
  CHECK_FALSE(cpu_json.contains("on_gpu"));
  CHECK_FALSE(cpu_json.contains("max_rel_err_gpu_vs_cpu"));
  CHECK_FALSE(cpu_json.contains("checks_wrong"));
  m.on_gpu = true;
  m.max_rel_err_gpu_vs_cpu = 2e-6;
  m.checks_wrong = true;
  const nlohmann::ordered_json gpu_json = m;
  CHECK(gpu_json["max_rel_err_gpu_vs_cpu"] == 2e-6);
  const auto back = gpu_json.get<checkpointing::CheckpointingMeasured>();
  CHECK(back.on_gpu);
  CHECK(back.checks_wrong);
  CHECK_FALSE(cpu_json.get<checkpointing::CheckpointingMeasured>().on_gpu);
}
