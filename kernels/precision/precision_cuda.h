#pragma once
// The 16-bit formats on a GPU: CUDA's own conversions to __half and __nv_bfloat16 (to set beside the lab's software
// rounding, bit for bit), and cuBLAS GEMMs whose inputs are stored in each format, accumulating in fp32. Without
// CUDA in the build each throws RunFailure saying why.
#include <cstdint>
#include <vector>

#include "engine/measure.h"

namespace dlsys::precision::cuda {

// Each value rounded on the GPU to fp16 and to bf16 (round to nearest, ties to even), as bits.
struct DeviceRounding {
  std::vector<std::uint16_t> fp16_bits, bf16_bits;
};
DeviceRounding round_on_device(const std::vector<float>& values);

// The storage of a GEMM's inputs and how cuBLAS multiplies them:
//   Fp32  fp32 inputs, fp32 arithmetic (CUBLAS_COMPUTE_32F);
//   Tf32  fp32 inputs, multiplied on tensor cores with 10-bit mantissas (CUBLAS_COMPUTE_32F_FAST_TF32);
//   Fp16  __half inputs, tensor cores, fp32 accumulation and output;
//   Bf16  __nv_bfloat16 inputs, tensor cores, fp32 accumulation and output.
enum class GemmFormat { Fp32, Tf32, Fp16, Bf16 };
inline const char* gemm_format_name(GemmFormat format) {
  switch (format) {
    case GemmFormat::Fp32:
      return "FP32";
    case GemmFormat::Tf32:
      return "TF32";
    case GemmFormat::Fp16:
      return "FP16";
    case GemmFormat::Bf16:
      return "BF16";
  }
  return "?";
}

// c: (n, n) = a: (n, n) b: (n, n), row-major fp32 on the host; the inputs are converted on the GPU to the format's
// storage before timing. Timed with CUDA events (options.warmup untimed calls, then options.repeats).
TimingStats gemm(GemmFormat format, std::int64_t n, const float* a, const float* b, float* c,
                 const MeasureOptions& options);

}  // namespace dlsys::precision::cuda
