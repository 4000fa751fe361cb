#pragma once
// Weight-only quantized matrix-vector products, y = W x at batch 1, the shape of every weight in LLM decoding:
//   fp32     - 4 bytes per weight, the baseline;
//   fp16     - 2 bytes, converted to fp32 on the fly (F16C where the CPU has it);
//   quantized - int8 codes (1 byte) or packed int4 / nf4 codes (half a byte), dequantized on the fly: a segment's
//              codes are multiplied into x first and its scale applied once, s (sum u x - z sum x).
// Each reads every weight once and does 2 FLOP per weight, so at batch 1 its time follows the bytes per weight.
// All share one loop structure (rows split across threads, 8-wide AVX2 FMA where the CPU has it, scalar otherwise),
// so the comparison is of formats, not of tuning.
#include <cstdint>

#include "kernels/quant/quantize.h"

namespace dlsys::quant {

void gemv_fp32(const float* w, std::int64_t rows, std::int64_t cols, const float* x, float* y, int threads);
void gemv_fp16(const std::uint16_t* w_fp16, std::int64_t rows, std::int64_t cols, const float* x, float* y,
               int threads);
void gemv_quantized(const QuantizedMatrix& q, const float* x, float* y, int threads);

// The oracles: fp32 weights, or the quantized ones dequantized, times x with double accumulation.
void gemv_reference(const float* w, std::int64_t rows, std::int64_t cols, const float* x, double* y);
void gemv_reference(const QuantizedMatrix& q, const float* x, double* y);

// The largest |y_r - ref_r| over the size of the terms summed in row r (sum |w^_rj x_j|, counting both parts of
// s (u - z)): fp32 keeps it below a few times cols x 2^-24 whatever the signs.
double gemv_max_relative_error(const float* w, std::int64_t rows, std::int64_t cols, const float* x, const float* y,
                               const double* ref);
double gemv_max_relative_error(const QuantizedMatrix& q, const float* x, const float* y, const double* ref);
double gemv_error_tolerance(std::int64_t cols);

// Whether the vector paths were compiled in ("AVX2 + FMA" or "scalar").
const char* gemv_instruction_set();

}  // namespace dlsys::quant
