#pragma once
// The precision lesson's typed values: the chosen format's limits from its layout, the memory of mixed-precision
// training per parameter, and what one run measured: either four trainings of the same seeded MLP (fp32, fp16 without
// and with loss scaling, bf16) or, with `round` set, one value rounded into the format. `dlsys-lab run --json` writes
// them under "theory" and "measured" with these field names as keys.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/lesson_values.h"

namespace dlsys::precision {

struct PrecisionTheory {
  std::string format;
  int exponent_bits = 0, mantissa_bits = 0, bias = 0;
  double max_finite = 0, min_normal = 0, min_subnormal = 0, epsilon = 0;
  // Mixed-precision Adam, model states per parameter (ZeRO, Rajbhandari et al. 2020, section 3.1): 16-bit weights
  // and gradients, fp32 master weights and Adam's two moments.
  int bytes_per_parameter = 16;
  std::int64_t parameters = 0;  // the lesson's MLP
  std::int64_t model_state_bytes = 0;
  // Gradient bytes each of 8 ring all-reduce ranks sends per step, 2 (N - 1) / N x K, for a 7B model.
  double allreduce_bytes_fp32_7b = 0, allreduce_bytes_16bit_7b = 0;
  // The scaler's settings for this run, and GradScaler's defaults beside them.
  double init_scale = 0, growth_factor = 0, backoff_factor = 0;
  int growth_interval = 0, pytorch_growth_interval = 2000;
  double loss_weight = 0;
};

// One value rounded into the chosen format (`round=VALUE`).
struct RoundedValue {
  std::string input;
  std::string input_exact;  // the nearest double's exact decimal expansion
  double rounded = 0;
  std::string rounded_exact;
  std::string bits_hex, bit_fields;
  double error = 0, relative_error = 0;  // rounded - input (in double), and over |input|
  bool overflow = false, flushed = false, subnormal = false, tie = false;
};

// One training run's summary.
struct TrainingSummary {
  std::string label;  // "fp16, scaled"
  std::string format;
  bool scaling = false;
  double final_loss = 0;
  double underflow_fraction = 0;
  int skipped_steps = 0;
  double train_ms = 0;
};

// A step the scaler skipped: an inf or NaN in the gradients at that scale, which it then halved.
struct SkippedStep {
  int step = 0;  // 1-based
  double scale_before = 0, scale_after = 0;
};

struct Training {
  TrainingSummary chosen;
  std::vector<double> scale_trace;  // the chosen run's scale after each step
  TrainingSummary fp32, fp16_unscaled, fp16_scaled, bf16;
  std::vector<SkippedStep> fp16_scaled_first_skips;  // the first few
  int fp16_scaled_growths = 0;                       // how often the scale doubled
  double fp16_scaled_peak_scale = 0;
  double noise_floor = 0;  // loss_weight x the noise variance: what a perfect fit would reach
  // The shares of the fp32 run's gradient values (non-zero ones) that fp16 would flush to zero, at the first and the
  // last step, at scale 1 and at the scaler's initial scale.
  double flushed_share_first_scale1 = 0, flushed_share_last_scale1 = 0;
  double flushed_share_first_scaled = 0, flushed_share_last_scaled = 0;
  int scaled_log2 = 0;  // log2 of that scale
  // What the lesson expects of the default problem, and whether this run met it.
  double unscaled_over_fp32 = 0, scaled_over_fp32 = 0;
  bool unscaled_as_expected = false, scaled_as_expected = false;
};

// Measured on a GPU (--backend cuda).
struct GpuGemmRate {
  std::string format;      // FP32, TF32, FP16, BF16: the inputs' storage (and tensor-core mode for TF32)
  double tflops = 0;       // median call
  double tflops_best = 0;  // fastest call
  double max_rel_err = 0;  // sampled entries against the fp32 inputs multiplied in double
};
struct GpuFormats {
  std::int64_t values_checked = 0;  // fp32 values rounded by CUDA's __float2half_rn and __float2bfloat16_rn
  std::int64_t fp16_mismatches = 0, bf16_mismatches = 0;  // against the lab's software rounding, bit for bit
  std::int64_t gemm_n = 0;
  std::vector<GpuGemmRate> gemm;
};

struct PrecisionMeasured {
  std::optional<Training> training;
  std::optional<RoundedValue> rounding;
  std::optional<GpuFormats> gpu;
};

DLSYS_VALUES_JSON(PrecisionTheory, format, exponent_bits, mantissa_bits, bias, max_finite, min_normal, min_subnormal,
                  epsilon, bytes_per_parameter, parameters, model_state_bytes, allreduce_bytes_fp32_7b,
                  allreduce_bytes_16bit_7b, init_scale, growth_factor, backoff_factor, growth_interval,
                  pytorch_growth_interval, loss_weight)
DLSYS_VALUES_JSON(SkippedStep, step, scale_before, scale_after)
DLSYS_VALUES_JSON(GpuGemmRate, format, tflops, tflops_best, max_rel_err)
DLSYS_VALUES_JSON(GpuFormats, values_checked, fp16_mismatches, bf16_mismatches, gemm_n, gemm)
void to_json(nlohmann::ordered_json& json, const PrecisionMeasured& measured);
void from_json(const nlohmann::ordered_json& json, PrecisionMeasured& measured);

}  // namespace dlsys::precision
