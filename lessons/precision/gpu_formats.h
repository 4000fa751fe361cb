#pragma once
// What the precision lesson measures on a GPU (--backend cuda): CUDA's own fp16 and bf16 conversions set beside the
// lab's software rounding, bit for bit, and cuBLAS GEMMs on FP32, TF32, FP16 and BF16 inputs with their rates and the
// error their inputs' rounding costs.
#include <cstdint>

#include "kernels/precision/precision_devices.h"
#include "lessons/common/run_plan.h"
#include "lessons/precision/precision_values.h"

namespace dlsys::precision {

// Parts of `plan`: the conversions, then one GEMM per format, kGpuFormatsWeight in all (in trainings: a tenth of
// the run when it follows the four trainings).
inline constexpr double kGpuFormatsWeight = 0.5;
GpuFormats measure_gpu_formats(const CudaPrecision& device, std::int64_t gemm_n, int repeats, RunPlan& plan);

}  // namespace dlsys::precision
