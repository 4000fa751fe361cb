#pragma once
// The quant lesson's typed values: what the chosen scheme stores per weight (closed forms), and what one run
// measured: the error on a trained model's real weights and outputs, an outlier channel against per-tensor scales and
// LLM.int8()'s split, GEMV time per format at batch 1, NF4 with and without double quantisation, and 2:4 sparsity.
// `dlsys-lab run --json` writes them under "theory" and "measured" with these field names as keys.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/lesson_values.h"

namespace dlsys::quant {

struct QuantTheory {
  int bits = 0;
  std::string scheme, granularity;
  int block = 0;
  bool double_quant = false;
  double bytes_per_weight = 0;               // the codes alone: bits / 8
  double scale_overhead_bits_per_param = 0;  // scales (and zero points) of the GEMV's n x n matrix, per weight
  double stored_bits_per_weight = 0;         // bits + overhead
  int container_bits = 0;                    // what the kernel reads per code: 8, or 4 when packed two to a byte
  std::int64_t n = 0;                        // the GEMV's matrix is n x n
  // QLoRA's constants: 32-bit scales per block of 64 weights, and after double quantisation (8-bit scales, one
  // 32-bit scale per 256 of them).
  double nf4_overhead_bits = 0, nf4_double_quant_overhead_bits = 0;
  // A 7-billion-parameter model's weights at 2, 1 and 0.5 bytes per weight (GB = 1e9 bytes), and NF4's constants.
  double model_7b_16bit_bytes = 0, model_7b_8bit_bytes = 0, model_7b_4bit_bytes = 0;
  double model_7b_nf4_constants_bytes = 0, model_7b_nf4_dq_constants_bytes = 0;
  double int8_smaller_than_fp32 = 4, int8_smaller_than_fp16 = 2;
  double outlier_threshold = 6.0;  // LLM.int8(): feature dimensions with |x| >= 6 stay in 16 bits
};

struct GemvTiming {
  std::string key;  // fp32, fp16, int8, int4, chosen
  std::string label;
  double bytes_per_weight = 0;  // read by the kernel: codes and scales
  double gemv_us = 0, gemv_min_us = 0, gemv_max_us = 0;
  int repeats = 0;
  double gbps = 0;         // bytes read / time
  double max_rel_err = 0;  // against the double reference of the same (dequantized) weights
  bool wrong = false;
};

struct QuantMeasured {
  // The chosen scheme on the trained model's three weight matrices and its outputs on its own data.
  double weight_mse = 0;
  std::optional<double> uniform_noise_mse;  // the D^2 / 12 prediction for the same scales (not for nf4)
  double output_rel_err = 0;                // || y_quantized - y_fp32 || / || y_fp32 ||
  double model_final_loss = 0;
  // GEMV at batch 1 on an n x n matrix, the chosen scheme against fp32, in the same run.
  double gemv_us = 0, fp32_gemv_us = 0, speedup = 0;
  std::vector<GemvTiming> gemv;
  double int8_speedup = 0;
  bool int8_as_expected = false;
  double bandwidth_gbps = 0;  // a read stream's (on a GPU STREAM triad's): the ceiling the time-per-byte line uses
  // One activation channel made large: relative error of X W^T with X quantized to int8 four ways.
  int outlier_channel = 0;
  double outlier_factor = 0, outlier_absmax = 0, others_absmax = 0;
  int split_columns = 0;
  double err_per_tensor_clean = 0, err_per_tensor_outlier = 0, err_per_token_outlier = 0, err_llm_int8 = 0;
  // 4-bit on the real weights, blocks of 64: integer absmax against NF4, and NF4 with double-quantized scales.
  double mse_int4_absmax_block = 0, mse_nf4_block = 0, mse_nf4_block_double_quant = 0;
  double output_rel_err_int4_absmax_block = 0, output_rel_err_nf4_block = 0;
  // The same three on seeded normally distributed weights of the same count, where NF4's levels fit.
  double normal_mse_int4_absmax_block = 0, normal_mse_nf4_block = 0, normal_mse_nf4_block_double_quant = 0;
  // 2:4 sparsity on the real weights: the 2 largest of every 4 kept, against keeping the largest half anywhere.
  double sparse_2_4_weight_rel_err = 0, sparse_2_4_output_rel_err = 0;
  double unstructured_half_weight_rel_err = 0, unstructured_half_output_rel_err = 0;
  // The top-left corner of W2 and which of its weights 2:4 kept, for the drawing.
  int sparse_sample_rows = 0, sparse_sample_cols = 0;
  std::vector<float> sparse_sample;
  std::vector<int> sparse_sample_kept;  // 1 kept, 0 pruned
};

DLSYS_VALUES_JSON(QuantTheory, bits, scheme, granularity, block, double_quant, bytes_per_weight,
                  scale_overhead_bits_per_param, stored_bits_per_weight, container_bits, n, nf4_overhead_bits,
                  nf4_double_quant_overhead_bits, model_7b_16bit_bytes, model_7b_8bit_bytes, model_7b_4bit_bytes,
                  model_7b_nf4_constants_bytes, model_7b_nf4_dq_constants_bytes, int8_smaller_than_fp32,
                  int8_smaller_than_fp16, outlier_threshold)
void to_json(nlohmann::ordered_json& json, const QuantMeasured& measured);
void from_json(const nlohmann::ordered_json& json, QuantMeasured& measured);

}  // namespace dlsys::quant
