// The checkpointing lesson's run: the stack trained one step without checkpointing and one at every divisor k of L,
// each step's activation peak read from the memory ledger, its gradients compared bit for bit with the plain step's,
// and its time measured in alternation with the plain step's.
#include <fmt/format.h>

#include <cstring>

#include "engine/address_space.h"
#include "engine/measure.h"
#include "kernels/training/checkpointed_step.h"
#include "lessons/checkpointing/checkpointing_lesson.h"
#include "lessons/common/run_plan.h"

namespace dlsys {

using checkpointing::CheckpointingParams;

namespace {

constexpr std::uint32_t kSeed = 22;

// The forward pass alone, every activation kept (the extra work a checkpointed step does), median microseconds.
double forward_median_us(const training::StackShape& shape, const std::vector<float>& weights,
                         const training::DataSet& data, const CheckpointingParams& p, RunContext& ctx) {
  training::Activations acts(shape, p.rows);
  return measure(
             [&] {
               training::forward(shape, training::flat_weights(shape, weights.data()), data.inputs.data(),
                                 data.targets.data(), p.rows, acts);
             },
             MeasureOptions{.warmup = 1, .repeats = p.repeats}, [&] { ctx.control.check_cancelled(); })
      .median_us;
}

}  // namespace

RunResult CheckpointingLesson::run_with(const CheckpointingParams& p, RunContext& ctx) const {
  RunResult result = begin_result(*this, ctx);
  const checkpointing::CheckpointingTheory theory = theory_of(p);
  const training::StackShape shape = p.shape();
  RunPlan plan(ctx.control, 1 + double(theory.divisors.size()));
  set_openblas_threads(1);  // a pool waiting on a core another program holds made a quick run 7x slower
  plan.start("the plain step: every layer's activations kept");
  const std::vector<float> weights = training::initial_weights(shape, kSeed);
  const training::DataSet data = training::make_data_set(shape, p.rows, kSeed);
  const auto parameters = std::size_t(training::parameter_count(shape));
  std::vector<float> plain_gradients(parameters), gradients(parameters);
  const auto step = [&](int k, std::vector<float>& out) {
    return training::train_step(shape, weights.data(), data.inputs.data(), data.targets.data(), p.rows, k, ctx.ledger,
                                out.data());
  };
  ctx.ledger.reset_peaks();
  checkpointing::CheckpointingMeasured m;
  m.loss = step(training::kKeepEverything, plain_gradients);
  m.keep_all_peak_bytes = ctx.ledger.peak_bytes(training::kActivationTag);
  m.peaks_match_formula =
      m.keep_all_peak_bytes == training::step_activation_peak_bytes(shape, p.rows, training::kKeepEverything);
  m.all_gradients_identical = true;
  m.forward_us = forward_median_us(shape, weights, data, p, ctx);
  Series peaks =
      checkpointing::series_over_k("measured", "peak_measured", "peak activations (ledger)", "peak activations", "B");
  Series ratios = checkpointing::series_over_k("measured", "time_measured", "step time / plain step (measured)",
                                               "step time / plain step", "");
  std::int64_t least_peak = m.keep_all_peak_bytes + 1;
  for (int k : theory.divisors) {
    plan.start(fmt::format("checkpoint every k = {} layers", k));
    checkpointing::SegmentMeasured s;
    s.segment_layers = k;
    ctx.ledger.reset_peaks();
    const double loss = step(k, gradients);
    s.peak_activation_bytes = ctx.ledger.peak_bytes(training::kActivationTag);
    s.peak_formula_bytes = training::step_activation_peak_bytes(shape, p.rows, k);
    s.gradients_identical =
        loss == m.loss && std::memcmp(gradients.data(), plain_gradients.data(), parameters * sizeof(float)) == 0;
    const auto [plain, checkpointed] =
        measure_pair([&] { step(training::kKeepEverything, plain_gradients); }, [&] { step(k, gradients); },
                     MeasureOptions{.warmup = 0, .repeats = p.repeats}, [&] { ctx.control.check_cancelled(); });
    s.step_us = checkpointed.median_us;
    s.step_min_us = checkpointed.min_us;
    s.step_max_us = checkpointed.max_us;
    s.keep_all_us = plain.median_us;
    s.time_ratio = s.step_us / s.keep_all_us;
    m.peaks_match_formula = m.peaks_match_formula && s.peak_activation_bytes == s.peak_formula_bytes;
    m.all_gradients_identical = m.all_gradients_identical && s.gradients_identical;
    if (s.peak_activation_bytes < least_peak) {
      least_peak = s.peak_activation_bytes;
      m.measured_best_k = k;
    }
    if (k == p.segment_layers) {
      m.checkpointed_peak_bytes = s.peak_activation_bytes;
      m.keep_all_step_us = s.keep_all_us;
      m.checkpointed_step_us = s.step_us;
      m.time_ratio = s.time_ratio;
      m.predicted_time_ratio = 1 + m.forward_us / s.keep_all_us;
    }
    peaks.points.push_back(
        {double(k), double(s.peak_activation_bytes), double(s.peak_activation_bytes), double(s.peak_activation_bytes)});
    ratios.points.push_back(
        {double(k), s.time_ratio, checkpointed.min_us / s.keep_all_us, checkpointed.max_us / s.keep_all_us});
    result.backend.repeats = checkpointed.repeats;
    m.sweep.push_back(s);
  }
  const auto steps = checkpointing::make_steps(p, theory);
  result.series = {peaks, steps->peak_formula, steps->keep_all_line, ratios, steps->time_formula};
  result.measured = make_values(std::move(m));
  plan.finish();
  finish_result(result, ctx.ledger);
  return result;
}

}  // namespace dlsys
