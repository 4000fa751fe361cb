#pragma once
// Matrix-vector products on stored (quantized) weights, y = W x at batch 1, the shape of every weight in LLM decoding:
//   fp32     - 4 bytes per weight, the baseline;
//   fp16     - 2 bytes, converted to fp32 on the fly (F16C where the CPU has it);
//   quantized - int8 codes (1 byte) or packed int4 codes (half a byte) with their scales. The codes are multiplied by
//              x quantized to int8 with one scale for the vector (per-token activations, as SmoothQuant and
//              llama.cpp's CPU kernels do): whole-number products summed exactly in int32 (AVX2 maddubs), a
//              segment's scale and zero point applied once, s (sum u x - z sum x). NF4 codes stand for levels that
//              are not whole numbers; they are looked up and multiplied by x as it is, in fp32.
// Each reads every weight once and does 2 FLOP per weight, so at batch 1 its time follows the bytes per weight.
// All split rows across threads and use 256-bit AVX2 where the CPU has it (scalar otherwise).

#include <cstdint>
#include <vector>

#include "kernels/quant/quantize.h"

namespace dlsys::quant {

void gemv_fp32(const float* w, std::int64_t rows, std::int64_t cols, const float* x, float* y, int threads);
void gemv_fp16(const std::uint16_t* w_fp16, std::int64_t rows, std::int64_t cols, const float* x, float* y,
               int threads);
void gemv_quantized(const QuantizedMatrix& q, const float* x, float* y, int threads);
// x as gemv_quantized multiplies it: its int8 codes times their scale for integer codes, x itself for NF4. A
// reference for the kernel multiplies by this.
std::vector<float> gemv_x_as_used(const QuantizedMatrix& q, const float* x);

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
