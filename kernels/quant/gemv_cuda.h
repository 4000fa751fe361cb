#pragma once
// Weight-only GEMV at batch 1 on a GPU, y = W x with W: (rows, cols) row-major:
//   fp32       cuBLAS sgemv, 4 bytes per weight;
//   fp16       cuBLAS GemmEx with __half weights and x rounded to __half, fp32 accumulation: 2 bytes per weight;
//   quantized  the lab's kernel, reading the packed codes of quantize.h (16 bytes per lane and load where a row splits
//              into whole loads, byte by byte otherwise) and dequantizing on the fly, w^ = s (u - z) (nf4:
//              s x level[u]): 1 or half a byte per weight plus the scales.
// Each copies W and x to GPU 0, times `options.repeats` calls with CUDA events, each after a buffer twice the L2
// cache's size was read (so W comes from memory, as a layer's weights do in decoding), and copies the last y back.
// Without CUDA in the build each throws RunFailure saying why.
#include <cstdint>
#include <string>

#include "engine/measure.h"
#include "kernels/quant/quantize.h"

namespace dlsys::quant::cuda {

// How the memory-bound quantized kernel divides the work (kernels/quant/cuda/gemv_cuda.cu):
//   rows_per_warp    rows whose codes a warp reads side by side, each x value loaded once serving all of them;
//   warps_per_row    warps of a block that share those rows' columns (interleaved by 512-byte loads), their sums
//                    added through shared memory: more, shorter work units, so every SM ends at about the same time;
//   loads_in_flight  16-byte code loads a lane issues (over its rows) before it uses the first;
//   block_warps      warps per block;
//   prefetch         the lane issues its next loads before it computes on the current ones.
struct GemvShape {
  int rows_per_warp, warps_per_row, loads_in_flight, block_warps;
  bool prefetch;
};
inline constexpr GemvShape kGemvShapes[] = {
    {4, 1, 8, 4, false},   // 0: a warp per 4 whole rows (the first vector kernel)
    {4, 2, 8, 4, false},   // 1
    {4, 4, 8, 4, false},   // 2
    {4, 4, 4, 4, true},    // 3
    {4, 4, 8, 4, true},    // 4
    {2, 4, 8, 4, false},   // 5
    {8, 4, 8, 4, false},   // 6
    {2, 4, 8, 8, false},   // 7
    {4, 4, 16, 4, false},  // 8
    {2, 2, 4, 8, true},    // 9
};
inline constexpr int kGemvShapeCount = int(sizeof(kGemvShapes) / sizeof(kGemvShapes[0]));

// Beyond the table, the x-resident kernel: each lane loads the x values of one fixed 16-byte slice of codes (16 byte
// codes or 32 4-bit codes) into registers once, and the block, whose lanes together cover a whole row, streams
// `rows` rows at a time past them: per row one 16-byte load and its multiply-adds, no x reloaded; with `prefetch`
// the next batch's loads are in flight while this one's are used; with `stages` the codes and scales of the next
// stages - 1 batches are copied into shared memory as they arrive (cp.async), so more of them are in flight than the
// lanes' registers could hold. It takes rows of whole loads, at most kResidentMaxLoads of them, each inside one scale
// segment; other matrices take shape kResidentFallbackShape (or the general kernel).
struct ResidentVariant {
  int rows;
  bool prefetch;
  int stages;  // 0: the batches in registers
};
inline constexpr ResidentVariant kResidentVariants[] = {{4, false, 0}, {8, false, 0}, {2, true, 0},  {4, true, 0},
                                                        {4, false, 4}, {2, false, 6}, {2, false, 8}, {4, false, 3}};
inline constexpr int kResidentVariantCount = int(sizeof(kResidentVariants) / sizeof(kResidentVariants[0]));
inline constexpr int kResidentMaxLoads = 512;  // lanes per block, one load each
inline constexpr int kResidentFallbackShape = 3;
// Variants 0 .. kGemvShapeCount - 1 are kGemvShapes, the next kResidentVariantCount the x-resident kernel.
inline constexpr int kGemvVariantCount = kGemvShapeCount + kResidentVariantCount;
// The variants the lessons use, the fastest of each format on an H100 at 8192 x 8192 (dlsys_quant_bench prints every
// variant's time): for 4-bit integer codes the x-resident kernel with 3 stages of 4 rows in shared memory (74 % of
// the triad against 69 % with the batches in registers); for byte codes and NF4, whose arithmetic leaves the shared
// memory's pipe no room for staged loads (NF4 reads a level from it per code), 4 rows at a time with the next 4 in
// flight.
inline constexpr int kLessonGemvShape = kGemvShapeCount + 3;
inline constexpr int kLessonGemvShapeInt4 = kGemvShapeCount + 7;
inline constexpr int kLessonGemvShapeOfFormat = -1;  // as a `shape` argument: the lessons' variant for q's format
inline int lesson_gemv_shape(const QuantSpec& spec) {
  return spec.bits == 4 && spec.scheme != Scheme::Nf4 ? kLessonGemvShapeInt4 : kLessonGemvShape;
}

inline std::string gemv_shape_name(const GemvShape& shape) {
  return std::to_string(shape.rows_per_warp) + "r " + std::to_string(shape.warps_per_row) + "w/r " +
         std::to_string(shape.loads_in_flight) + "ld " + std::to_string(shape.block_warps * 32) + "t" +
         (shape.prefetch ? " pf" : "");
}
// `variant`: 0 .. kGemvVariantCount - 1.
inline std::string gemv_variant_name(int variant) {
  if (variant < kGemvShapeCount) return gemv_shape_name(kGemvShapes[variant]);
  const ResidentVariant& v = kResidentVariants[variant - kGemvShapeCount];
  return "x in registers, " + std::to_string(v.rows) + " rows at a time" + (v.prefetch ? ", the next in flight" : "") +
         (v.stages > 0 ? ", " + std::to_string(v.stages) + " stages in shared memory" : "");
}

TimingStats gemv_fp32(const float* w, std::int64_t rows, std::int64_t cols, const float* x, float* y,
                      const MeasureOptions& options);
// x_fp16: x already rounded to fp16 bits, as the GEMM reads it.
TimingStats gemv_fp16(const std::uint16_t* w_fp16, std::int64_t rows, std::int64_t cols, const std::uint16_t* x_fp16,
                      float* y, const MeasureOptions& options);
// `shape`: a variant, 0 .. kGemvVariantCount - 1 (kGemvShapes, then the x-resident kernel), or
// kLessonGemvShapeOfFormat.
TimingStats gemv_quantized(const QuantizedMatrix& q, const float* x, float* y, const MeasureOptions& options,
                           int shape = kLessonGemvShapeOfFormat);

}  // namespace dlsys::quant::cuda
