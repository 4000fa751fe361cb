#include "lessons/precision/precision_train.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/measure.h"
#include "kernels/precision/mixed_precision_mlp.h"
#include "lessons/precision/precision_lesson.h"
#include "lessons/precision/precision_problem.h"

namespace dlsys::precision {

namespace {

// The largest scale the gradient plots try: 2^48 lifts a 2^-64 gradient to 2^-16.
constexpr int kMaxScaleLog2Plotted = 48;
// Skipped steps listed one by one: the first few show the pattern.
constexpr std::size_t kSkipsListed = 4;

struct RunSpec {
  const char* key;  // series ids: loss_<key>
  std::string label;
  Format format;
  bool scaling;
};

std::string label_of(Format format, bool scaling) {
  const std::string name = layout_of(format).name;
  if (format == Format::Fp32) return scaling ? "fp32, scaled" : "fp32";
  return name + (scaling ? ", loss scaling" : ", no scaling");
}

struct OneRun {
  TrainResult result;
  TrainingSummary summary;
};

OneRun train_one(const Problem& problem, const RunSpec& spec, const TrainOptions& base, RunPlan& plan) {
  TrainOptions options = base;
  options.format = spec.format;
  options.scaling = spec.scaling;
  const Stopwatch clock;
  OneRun run;
  run.result = train_mlp(problem, options, [&](int step) {
    plan.control().check_cancelled();
    if (step % kProgressSteps == 0)
      plan.start(fmt::format("{}: step {} of {}", spec.label, step + 1, options.steps),
                 double(std::min(kProgressSteps, options.steps - step)) / options.steps);
  });
  run.summary = {spec.label,
                 layout_of(spec.format).name,
                 spec.scaling,
                 run.result.final_loss,
                 run.result.underflow_fraction(),
                 run.result.skipped_steps,
                 clock.elapsed_us() / 1e3};
  return run;
}

Series loss_series(const RunSpec& spec, const TrainResult& r) {
  Series s{std::string("loss_") + spec.key, spec.label, "measured", "step", "", "loss", "", {}};
  for (std::size_t i = 0; i < r.steps.size(); ++i) {
    const double loss = r.steps[i].loss;
    s.points.push_back({double(i + 1), loss, loss, loss});
  }
  return s;
}

void add_scale_series(std::vector<Series>& out, const std::string& key, const std::string& label,
                      const TrainResult& r) {
  Series scale{"scale_" + key, label + ": scale S", "measured", "step", "", "loss scale", "", {}};
  Series skipped{
      "skipped_" + key, label + ": skipped steps (inf or NaN)", "measured", "step", "", "loss scale", "", {}};
  for (std::size_t i = 0; i < r.steps.size(); ++i) {
    const StepRecord& step = r.steps[i];
    scale.points.push_back({double(i + 1), step.scale_after, step.scale_after, step.scale_after});
    if (step.skipped) skipped.points.push_back({double(i + 1), step.scale_used, step.scale_used, step.scale_used});
  }
  out.push_back(std::move(scale));
  out.push_back(std::move(skipped));
}

// Share (percent) of the non-zero gradient values in each octave [2^k, 2^(k+1)), from the lowest octave present to the
// highest.
Series octave_histogram(const std::string& id, const std::string& name, const std::vector<float>& gradients) {
  constexpr int kLowest = -160, kHighest = 128;
  std::vector<std::int64_t> counts(kHighest - kLowest + 1, 0);
  std::int64_t nonzero = 0;
  for (float g : gradients) {
    if (g == 0.0f || !std::isfinite(g)) continue;
    int exponent = 0;
    std::frexp(g, &exponent);  // |g| in [2^(exponent - 1), 2^exponent)
    ++counts[std::size_t(exponent - 1 - kLowest)];
    ++nonzero;
  }
  Series s{id, name, "measured", "log2 |gradient|", "", "share of gradient values", "%", {}};
  int first = 0, last = -1;
  for (int i = 0; i < int(counts.size()); ++i)
    if (counts[std::size_t(i)] > 0) {
      if (last < 0) first = i;
      last = i;
    }
  for (int i = first; i <= last; ++i) {
    const double percent = nonzero ? 100.0 * double(counts[std::size_t(i)]) / double(nonzero) : 0.0;
    s.points.push_back({double(i + kLowest), percent, percent, percent});
  }
  return s;
}

Series share_against_scale(const std::string& id, const std::string& name, const std::vector<float>& gradients,
                           double (*share)(const std::vector<float>&, int)) {
  Series s{id, name, "measured", "log2 of the loss scale", "", "share of gradient values", "%", {}};
  for (int k = 0; k <= kMaxScaleLog2Plotted; ++k) {
    const double percent = share(gradients, k);
    s.points.push_back({double(k), percent, percent, percent});
  }
  return s;
}

}  // namespace

double fp16_flushed_percent(const std::vector<float>& gradients, int scale_log2) {
  std::int64_t nonzero = 0, flushed = 0;
  for (float g : gradients) {
    if (g == 0.0f || !std::isfinite(g)) continue;
    ++nonzero;
    flushed += round_to_fp16(std::ldexp(g, scale_log2)) == 0.0f;
  }
  return nonzero ? 100.0 * double(flushed) / double(nonzero) : 0.0;
}

double fp16_overflow_percent(const std::vector<float>& gradients, int scale_log2) {
  std::int64_t nonzero = 0, overflowed = 0;
  for (float g : gradients) {
    if (g == 0.0f || !std::isfinite(g)) continue;
    ++nonzero;
    overflowed += std::isinf(round_to_fp16(std::ldexp(g, scale_log2)));
  }
  return nonzero ? 100.0 * double(overflowed) / double(nonzero) : 0.0;
}

namespace {

// The four trainings every run shows, then the chosen format and scaling when it is none of them; `chosen` gets its
// index.
std::vector<RunSpec> training_specs(const PrecisionParams& p, std::size_t& chosen) {
  std::vector<RunSpec> specs = {
      {"fp32", label_of(Format::Fp32, false), Format::Fp32, false},
      {"fp16_unscaled", label_of(Format::Fp16, false), Format::Fp16, false},
      {"fp16_scaled", label_of(Format::Fp16, true), Format::Fp16, true},
      {"bf16", label_of(Format::Bf16, false), Format::Bf16, false},
  };
  chosen = specs.size();
  for (std::size_t i = 0; i < specs.size(); ++i)
    if (specs[i].format == p.format && specs[i].scaling == p.scaling) chosen = i;
  if (chosen == specs.size()) specs.push_back({"chosen", label_of(p.format, p.scaling), p.format, p.scaling});
  return specs;
}

}  // namespace

std::size_t training_count(const PrecisionParams& p) {
  std::size_t chosen = 0;
  return training_specs(p, chosen).size();
}

TrainingRuns run_trainings(const PrecisionParams& p, RunPlan& plan) {
  const Problem problem = make_problem(precision_problem_spec());
  TrainOptions base;
  base.steps = p.steps;
  base.learning_rate = p.learning_rate;
  base.loss_weight = p.loss_weight;
  base.scaler.init_scale = p.init_scale;
  base.scaler.growth_interval = p.growth_interval;

  std::size_t chosen = 0;
  const std::vector<RunSpec> specs = training_specs(p, chosen);
  const bool chosen_scaling = p.scaling;

  TrainingRuns out;
  std::vector<OneRun> runs;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    TrainOptions options = base;
    if (i == 0) options.snapshot_steps = {0, base.steps - 1};  // the fp32 run's exact gradients, first and last step
    runs.push_back(train_one(problem, specs[i], options, plan));
    out.series.push_back(loss_series(specs[i], runs.back().result));
  }

  Training& t = out.training;
  t.fp32 = runs[0].summary;
  t.fp16_unscaled = runs[1].summary;
  t.fp16_scaled = runs[2].summary;
  t.bf16 = runs[3].summary;
  t.chosen = runs[chosen].summary;
  for (const StepRecord& step : runs[chosen].result.steps) t.scale_trace.push_back(step.scale_after);
  t.noise_floor = base.loss_weight * problem.noise_floor;
  add_scale_series(out.series, "fp16_scaled", specs[2].label, runs[2].result);
  const std::vector<StepRecord>& scaled_steps = runs[2].result.steps;
  for (std::size_t i = 0; i < scaled_steps.size(); ++i) {
    const StepRecord& step = scaled_steps[i];
    t.fp16_scaled_growths += step.grew ? 1 : 0;
    t.fp16_scaled_peak_scale = std::max({t.fp16_scaled_peak_scale, step.scale_used, step.scale_after});
    if (step.skipped && t.fp16_scaled_first_skips.size() < kSkipsListed)
      t.fp16_scaled_first_skips.push_back({int(i + 1), step.scale_used, step.scale_after});
  }
  if (chosen_scaling && chosen != 2) add_scale_series(out.series, "chosen", specs[chosen].label, runs[chosen].result);

  const std::vector<float>& first = runs[0].result.gradient_snapshots.front();
  const std::vector<float>& last = runs[0].result.gradient_snapshots.back();
  t.scaled_log2 = int(std::lround(std::log2(base.scaler.init_scale)));
  t.flushed_share_first_scale1 = fp16_flushed_percent(first, 0) / 100;
  t.flushed_share_last_scale1 = fp16_flushed_percent(last, 0) / 100;
  t.flushed_share_first_scaled = fp16_flushed_percent(first, t.scaled_log2) / 100;
  t.flushed_share_last_scaled = fp16_flushed_percent(last, t.scaled_log2) / 100;
  out.series.push_back(octave_histogram("grad_hist_first", "fp32 gradients, step 1", first));
  out.series.push_back(octave_histogram("grad_hist_last", fmt::format("fp32 gradients, step {}", base.steps), last));
  out.series.push_back(
      share_against_scale("flushed_vs_scale_first", "flushed to 0 in fp16, step 1", first, fp16_flushed_percent));
  out.series.push_back(share_against_scale(
      "flushed_vs_scale_last", fmt::format("flushed to 0 in fp16, step {}", base.steps), last, fp16_flushed_percent));
  out.series.push_back(
      share_against_scale("overflow_vs_scale_first", "inf in fp16, step 1", first, fp16_overflow_percent));

  t.unscaled_over_fp32 = t.fp16_unscaled.final_loss / t.fp32.final_loss;
  t.scaled_over_fp32 = t.fp16_scaled.final_loss / t.fp32.final_loss;
  t.unscaled_as_expected = t.unscaled_over_fp32 >= kUnscaledWorseAtLeast;
  t.scaled_as_expected = std::fabs(t.scaled_over_fp32 - 1.0) * 100 <= kScaledWithinPercent;
  return out;
}

}  // namespace dlsys::precision
