#pragma once
// What the quant steps draw before a run, from closed forms: decode's bytes per token and its time bound per format,
// NF4's levels and the scale overhead before and after double quantisation, a 7B model's sizes, and 2:4 storage.
#include <memory>
#include <string>
#include <vector>

#include "kernels/quant/quantize.h"
#include "lessons/common/step_data.h"

namespace dlsys::quant {

struct DecodeRow {
  std::string format;
  double bytes_per_weight = 0;
  double model_bytes = 0;   // 7e9 weights
  double ms_per_token = 0;  // model bytes / bandwidth: reading every weight once per token at batch 1
  double tokens_per_s = 0;
  double flop_per_byte = 0;  // 2 FLOP per weight / bytes per weight
};

struct QuantSteps final : StepData {
  double parameters = 7e9;
  double bandwidth_gbps = 3350;    // H100 SXM, NVIDIA's datasheet
  double ridge_flop_per_byte = 0;  // H100 SXM dense BF16 989 TFLOP/s over 3.35 TB/s
  std::vector<DecodeRow> decode;   // fp32, fp16/bf16, int8, int4
  std::vector<float> nf4_levels;
  double nf4_overhead_bits = 0, nf4_double_quant_overhead_bits = 0;
  double nf4_constants_bytes = 0, nf4_double_quant_constants_bytes = 0;  // for 7e9 weights
  // The chosen scheme on a 4096 x 4096 matrix: bits per weight for the codes and for the scales.
  std::string chosen_label;
  double chosen_code_bits = 0, chosen_overhead_bits = 0;
  // 2:4 in fp16: two values of 2 bytes and a 2-bit position each, per 4 weights.
  double sparse_2_4_bytes_per_weight = 0, dense_fp16_bytes_per_weight = 2;
};

// `chosen`: the lesson's chosen quantization.
std::shared_ptr<const QuantSteps> make_quant_steps(const QuantSpec& chosen);

}  // namespace dlsys::quant
