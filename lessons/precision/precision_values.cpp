#include "lessons/precision/precision_values.h"

#include <array>

#include "engine/json_read.h"

namespace dlsys::precision {

void to_json(nlohmann::ordered_json& j, const PrecisionTheory& t) {
  j["format"] = t.format;
  j["exponent_bits"] = t.exponent_bits;
  j["mantissa_bits"] = t.mantissa_bits;
  j["bias"] = t.bias;
  j["max_finite"] = t.max_finite;
  j["min_normal"] = t.min_normal;
  j["min_subnormal"] = t.min_subnormal;
  j["epsilon"] = t.epsilon;
  j["bytes_per_parameter"] = t.bytes_per_parameter;
  j["parameters"] = t.parameters;
  j["model_state_bytes"] = t.model_state_bytes;
  j["allreduce_bytes_fp32_7b"] = t.allreduce_bytes_fp32_7b;
  j["allreduce_bytes_16bit_7b"] = t.allreduce_bytes_16bit_7b;
  j["init_scale"] = t.init_scale;
  j["growth_factor"] = t.growth_factor;
  j["backoff_factor"] = t.backoff_factor;
  j["growth_interval"] = t.growth_interval;
  j["pytorch_growth_interval"] = t.pytorch_growth_interval;
  j["loss_weight"] = t.loss_weight;
}

namespace {

void write_summary(nlohmann::ordered_json& j, const std::string& prefix, const TrainingSummary& s) {
  j[prefix + "final_loss"] = s.final_loss;
  j[prefix + "underflow_fraction"] = s.underflow_fraction;
  j[prefix + "skipped_steps"] = s.skipped_steps;
  j[prefix + "train_ms"] = s.train_ms;
}

void read_summary(const nlohmann::ordered_json& j, const std::string& prefix, TrainingSummary& s) {
  read_key(j, prefix + "final_loss", s.final_loss);
  read_key(j, prefix + "underflow_fraction", s.underflow_fraction);
  read_key(j, prefix + "skipped_steps", s.skipped_steps);
  read_key(j, prefix + "train_ms", s.train_ms);
}

template <class TrainingT>
auto summaries(TrainingT& t) {
  return std::array{std::pair{"chosen", &t.chosen}, std::pair{"fp32", &t.fp32},
                    std::pair{"fp16_unscaled", &t.fp16_unscaled}, std::pair{"fp16_scaled", &t.fp16_scaled},
                    std::pair{"bf16", &t.bf16}};
}

}  // namespace

// The chosen run's values under the documented keys, then each of the four runs prefixed by its name.
void to_json(nlohmann::ordered_json& j, const PrecisionMeasured& m) {
  j = nlohmann::ordered_json::object();
  if (const RoundedValue* r = m.rounding ? &*m.rounding : nullptr) {
    j["input"] = r->input;
    j["input_exact"] = r->input_exact;
    j["rounded"] = r->rounded;
    j["rounded_exact"] = r->rounded_exact;
    j["bits_hex"] = r->bits_hex;
    j["bit_fields"] = r->bit_fields;
    j["error"] = r->error;
    j["relative_error"] = r->relative_error;
    j["overflow"] = r->overflow;
    j["flushed"] = r->flushed;
    j["subnormal"] = r->subnormal;
    j["tie"] = r->tie;
  }
  if (const Training* t = m.training ? &*m.training : nullptr) {
    j["format"] = t->chosen.format;
    j["scaling"] = t->chosen.scaling ? "on" : "off";
    j["final_loss"] = t->chosen.final_loss;
    j["underflow_fraction"] = t->chosen.underflow_fraction;
    j["skipped_steps"] = t->chosen.skipped_steps;
    j["scale_trace"] = t->scale_trace;
    j["noise_floor"] = t->noise_floor;
    write_summary(j, "fp32_", t->fp32);
    write_summary(j, "fp16_unscaled_", t->fp16_unscaled);
    write_summary(j, "fp16_scaled_", t->fp16_scaled);
    write_summary(j, "bf16_", t->bf16);
    auto skips = nlohmann::ordered_json::array();
    for (const SkippedStep& e : t->fp16_scaled_skips)
      skips.push_back({{"step", e.step}, {"scale_before", e.scale_before}, {"scale_after", e.scale_after}});
    j["fp16_scaled_first_skips"] = skips;
    j["fp16_scaled_growths"] = t->fp16_scaled_growths;
    j["fp16_scaled_peak_scale"] = t->fp16_scaled_peak_scale;
    j["flushed_share_first_scale1"] = t->flushed_share_first_scale1;
    j["flushed_share_last_scale1"] = t->flushed_share_last_scale1;
    j["flushed_share_first_scaled"] = t->flushed_share_first_scaled;
    j["flushed_share_last_scaled"] = t->flushed_share_last_scaled;
    j["scaled_log2"] = t->scaled_log2;
    j["unscaled_over_fp32"] = t->unscaled_over_fp32;
    j["scaled_over_fp32"] = t->scaled_over_fp32;
    j["unscaled_as_expected"] = t->unscaled_as_expected;
    j["scaled_as_expected"] = t->scaled_as_expected;
    // Each run's label, format and scaling, after the documented keys, so a recorded run draws the same legends.
    auto& runs = j["training_runs"];
    for (const auto& [prefix, summary] : summaries(*t))
      runs[prefix] = {{"label", summary->label}, {"format", summary->format}, {"scaling", summary->scaling}};
  }
  if (const GpuFormats* g = m.gpu ? &*m.gpu : nullptr) {
    auto& gpu = j["gpu"];
    gpu["values_checked"] = g->values_checked;
    gpu["fp16_mismatches"] = g->fp16_mismatches;
    gpu["bf16_mismatches"] = g->bf16_mismatches;
    gpu["gemm_n"] = g->gemm_n;
    gpu["gemm"] = nlohmann::ordered_json::array();
    for (const GpuGemmRate& r : g->gemm)
      gpu["gemm"].push_back(
          {{"format", r.format}, {"tflops", r.tflops}, {"tflops_best", r.tflops_best}, {"max_rel_err", r.max_rel_err}});
  }
}

void from_json(const nlohmann::ordered_json& j, PrecisionTheory& t) {
  read_key(j, "format", t.format);
  read_key(j, "exponent_bits", t.exponent_bits);
  read_key(j, "mantissa_bits", t.mantissa_bits);
  read_key(j, "bias", t.bias);
  read_key(j, "max_finite", t.max_finite);
  read_key(j, "min_normal", t.min_normal);
  read_key(j, "min_subnormal", t.min_subnormal);
  read_key(j, "epsilon", t.epsilon);
  read_key(j, "bytes_per_parameter", t.bytes_per_parameter);
  read_key(j, "parameters", t.parameters);
  read_key(j, "model_state_bytes", t.model_state_bytes);
  read_key(j, "allreduce_bytes_fp32_7b", t.allreduce_bytes_fp32_7b);
  read_key(j, "allreduce_bytes_16bit_7b", t.allreduce_bytes_16bit_7b);
  read_key(j, "init_scale", t.init_scale);
  read_key(j, "growth_factor", t.growth_factor);
  read_key(j, "backoff_factor", t.backoff_factor);
  read_key(j, "growth_interval", t.growth_interval);
  read_key(j, "pytorch_growth_interval", t.pytorch_growth_interval);
  read_key(j, "loss_weight", t.loss_weight);
}

void from_json(const nlohmann::ordered_json& j, SkippedStep& e) {
  read_key(j, "step", e.step);
  read_key(j, "scale_before", e.scale_before);
  read_key(j, "scale_after", e.scale_after);
}

void from_json(const nlohmann::ordered_json& j, GpuGemmRate& r) {
  read_key(j, "format", r.format);
  read_key(j, "tflops", r.tflops);
  read_key(j, "tflops_best", r.tflops_best);
  read_key(j, "max_rel_err", r.max_rel_err);
}

void from_json(const nlohmann::ordered_json& j, GpuFormats& g) {
  read_key(j, "values_checked", g.values_checked);
  read_key(j, "fp16_mismatches", g.fp16_mismatches);
  read_key(j, "bf16_mismatches", g.bf16_mismatches);
  read_key(j, "gemm_n", g.gemm_n);
  read_key(j, "gemm", g.gemm);
}

void from_json(const nlohmann::ordered_json& j, PrecisionMeasured& m) {
  m = PrecisionMeasured{};
  if (j.contains("input")) {
    RoundedValue r;
    read_key(j, "input", r.input);
    read_key(j, "input_exact", r.input_exact);
    read_key(j, "rounded", r.rounded);
    read_key(j, "rounded_exact", r.rounded_exact);
    read_key(j, "bits_hex", r.bits_hex);
    read_key(j, "bit_fields", r.bit_fields);
    read_key(j, "error", r.error);
    read_key(j, "relative_error", r.relative_error);
    read_key(j, "overflow", r.overflow);
    read_key(j, "flushed", r.flushed);
    read_key(j, "subnormal", r.subnormal);
    read_key(j, "tie", r.tie);
    m.rounding = std::move(r);
  }
  if (j.contains("final_loss")) {
    Training t;
    nlohmann::ordered_json runs;
    read_key(j, "training_runs", runs);
    for (const auto& [prefix, summary] : summaries(t)) {
      try {
        nlohmann::ordered_json run;
        read_key(runs, prefix, run);
        read_key(run, "label", summary->label);
        read_key(run, "format", summary->format);
        read_key(run, "scaling", summary->scaling);
      } catch (const JsonKeyError& e) {
        throw e.within("training_runs");
      }
    }
    read_key(j, "final_loss", t.chosen.final_loss);
    read_key(j, "underflow_fraction", t.chosen.underflow_fraction);
    read_key(j, "skipped_steps", t.chosen.skipped_steps);
    read_key(j, "scale_trace", t.scale_trace);
    read_key(j, "noise_floor", t.noise_floor);
    read_summary(j, "fp32_", t.fp32);
    read_summary(j, "fp16_unscaled_", t.fp16_unscaled);
    read_summary(j, "fp16_scaled_", t.fp16_scaled);
    read_summary(j, "bf16_", t.bf16);
    read_key(j, "fp16_scaled_first_skips", t.fp16_scaled_skips);
    read_key(j, "fp16_scaled_growths", t.fp16_scaled_growths);
    read_key(j, "fp16_scaled_peak_scale", t.fp16_scaled_peak_scale);
    read_key(j, "flushed_share_first_scale1", t.flushed_share_first_scale1);
    read_key(j, "flushed_share_last_scale1", t.flushed_share_last_scale1);
    read_key(j, "flushed_share_first_scaled", t.flushed_share_first_scaled);
    read_key(j, "flushed_share_last_scaled", t.flushed_share_last_scaled);
    read_key(j, "scaled_log2", t.scaled_log2);
    read_key(j, "unscaled_over_fp32", t.unscaled_over_fp32);
    read_key(j, "scaled_over_fp32", t.scaled_over_fp32);
    read_key(j, "unscaled_as_expected", t.unscaled_as_expected);
    read_key(j, "scaled_as_expected", t.scaled_as_expected);
    m.training = std::move(t);
  }
  if (j.contains("gpu")) {
    GpuFormats g;
    read_key(j, "gpu", g);
    m.gpu = std::move(g);
  }
}

}  // namespace dlsys::precision
