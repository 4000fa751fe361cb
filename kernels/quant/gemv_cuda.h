#pragma once
// Weight-only GEMV at batch 1 on a GPU, y = W x with W: (rows, cols) row-major:
//   fp32       cuBLAS sgemv, 4 bytes per weight;
//   fp16       cuBLAS GemmEx with __half weights and x rounded to __half, fp32 accumulation: 2 bytes per weight;
//   quantized  the lab's kernel, one warp per row, reading the packed codes of quantize.h (16 bytes per lane and load
//              where a row splits into whole loads, byte by byte otherwise) and dequantizing on the
//              fly, w^ = s (u - z) (nf4: s x level[u]): 1 or half a byte per weight plus the scales.
// Each copies W and x to GPU 0, times `options.repeats` calls with CUDA events, each after the L2 cache was
// overwritten (so W comes from memory, as a layer's weights do in decoding), and copies the last y back. Without
// CUDA in the build each throws RunFailure saying why.
#include <cstdint>

#include "engine/measure.h"
#include "kernels/quant/quantize.h"

namespace dlsys::quant::cuda {

TimingStats gemv_fp32(const float* w, std::int64_t rows, std::int64_t cols, const float* x, float* y,
                      const MeasureOptions& options);
// x_fp16: x already rounded to fp16 bits, as the GEMM reads it.
TimingStats gemv_fp16(const std::uint16_t* w_fp16, std::int64_t rows, std::int64_t cols, const std::uint16_t* x_fp16,
                      float* y, const MeasureOptions& options);
TimingStats gemv_quantized(const QuantizedMatrix& q, const float* x, float* y, const MeasureOptions& options);

}  // namespace dlsys::quant::cuda
