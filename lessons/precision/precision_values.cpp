#include "lessons/precision/precision_values.h"

#include <array>

#include "engine/json_read.h"

namespace dlsys::precision {

namespace {

// The rounding of one value (step "a number in a format"), flat under the measured keys.
DLSYS_VALUES_PART(RoundingKeys, RoundedValue, input, input_exact, rounded, rounded_exact, bits_hex, bit_fields, error,
                  relative_error, overflow, flushed, subnormal, tie)
// The chosen run's values under the documented keys (its scaling written "on" or "off"), then each of the four runs
// prefixed by its name ("fp32_final_loss"), then what they show together.
DLSYS_VALUES_PART(ChosenFormat, TrainingSummary, format)
DLSYS_VALUES_PART(ChosenResult, TrainingSummary, final_loss, underflow_fraction, skipped_steps)
DLSYS_VALUES_PART(ChosenTrace, Training, scale_trace, noise_floor)
DLSYS_VALUES_PART(SummaryKeys, TrainingSummary, final_loss, underflow_fraction, skipped_steps, train_ms)
DLSYS_VALUES_PART(Findings, Training, fp16_scaled_first_skips, fp16_scaled_growths, fp16_scaled_peak_scale,
                  flushed_share_first_scale1, flushed_share_last_scale1, flushed_share_first_scaled,
                  flushed_share_last_scaled, scaled_log2, unscaled_over_fp32, scaled_over_fp32, unscaled_as_expected,
                  scaled_as_expected)
// Each run's label, format and scaling, after the documented keys, so a recorded run draws the same legends.
DLSYS_VALUES_PART(RunLabels, TrainingSummary, label, format, scaling)

template <class TrainingT>
auto summaries(TrainingT& t) {
  return std::array{std::pair{"chosen", &t.chosen}, std::pair{"fp32", &t.fp32},
                    std::pair{"fp16_unscaled", &t.fp16_unscaled}, std::pair{"fp16_scaled", &t.fp16_scaled},
                    std::pair{"bf16", &t.bf16}};
}

void write_training(nlohmann::ordered_json& j, const Training& t) {
  ChosenFormat::write(j, t.chosen);
  j["scaling"] = t.chosen.scaling ? "on" : "off";
  ChosenResult::write(j, t.chosen);
  ChosenTrace::write(j, t);
  for (const auto& [prefix, summary] : summaries(t))
    if (summary != &t.chosen) SummaryKeys::write(j, *summary, std::string(prefix) + "_");
  Findings::write(j, t);
  auto& runs = j["training_runs"];
  for (const auto& [prefix, summary] : summaries(t)) RunLabels::write(runs[prefix], *summary);
}

void read_training(const nlohmann::ordered_json& j, Training& t) {
  nlohmann::ordered_json runs;
  read_key(j, "training_runs", runs);
  for (const auto& [prefix, summary] : summaries(t)) {
    try {
      nlohmann::ordered_json run;
      read_key(runs, prefix, run);
      RunLabels::read(run, *summary);
    } catch (const JsonKeyError& e) {
      throw e.within("training_runs");
    }
  }
  ChosenResult::read(j, t.chosen);
  ChosenTrace::read(j, t);
  for (const auto& [prefix, summary] : summaries(t))
    if (summary != &t.chosen) SummaryKeys::read(j, *summary, std::string(prefix) + "_");
  Findings::read(j, t);
}

}  // namespace

void to_json(nlohmann::ordered_json& j, const PrecisionMeasured& m) {
  j = nlohmann::ordered_json::object();
  if (m.rounding) RoundingKeys::write(j, *m.rounding);
  if (m.training) write_training(j, *m.training);
  if (m.gpu) j["gpu"] = *m.gpu;
}

void from_json(const nlohmann::ordered_json& j, PrecisionMeasured& m) {
  m = PrecisionMeasured{};
  if (j.contains("input")) RoundingKeys::read(j, m.rounding.emplace());
  if (j.contains("final_loss")) read_training(j, m.training.emplace());
  if (j.contains("gpu")) read_key(j, "gpu", m.gpu.emplace());
}

}  // namespace dlsys::precision
