#include "lessons/precision/precision_values.h"

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

}  // namespace dlsys::precision
