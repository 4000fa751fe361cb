#pragma once
// The two places the precision lesson runs, behind the one interface its run is written against (precision_lesson.cpp's
// run_on template). The trainings are the same on both: every 16-bit tensor rounded in software on the host. What
// differs is whether the device has 16-bit formats of its own to set beside that rounding (kHasOwnFormats):
//   CpuPrecision   none that the lab uses: the software rounding is the run's only fp16 and bf16, so the run has no
//                  part that would call the methods below, and the CPU device has none of them.
//   CudaPrecision  CUDA's conversions to __half and __nv_bfloat16, and cuBLAS GEMMs on each format's storage timed
//                  with CUDA events, each forwarded to precision_cuda.h.
#include <cstdint>
#include <vector>

#include "engine/measure.h"
#include "kernels/precision/precision_cuda.h"

namespace dlsys::precision {

class CpuPrecision {
 public:
  static constexpr bool kHasOwnFormats = false;
};

class CudaPrecision {
 public:
  static constexpr bool kHasOwnFormats = true;
  // What the formats part measures, for the run's backend notes.
  static constexpr const char* kOwnFormatsNote =
      "on the GPU: CUDA's own fp16 and bf16 conversions checked against the software rounding, and cuBLAS GEMMs on "
      "each format's storage timed with CUDA events (the trainings above stay in software)";

  // Each value rounded by the device to fp16 and to bf16.
  cuda::DeviceRounding round(const std::vector<float>& values) const { return cuda::round_on_device(values); }
  // c = a b, all (n, n), with the inputs stored in `format`.
  TimingStats gemm(cuda::GemmFormat format, std::int64_t n, const float* a, const float* b, float* c,
                   const MeasureOptions& options) const {
    return cuda::gemm(format, n, a, b, c, options);
  }
};

}  // namespace dlsys::precision
