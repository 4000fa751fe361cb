#pragma once
// The matmul variants as a lesson asks for them: one table naming each variant on both backends, and one call that
// times a variant on whichever backend the run chose. The CPU/CUDA choice lives here so no caller needs to know
// whether this build has CUDA (without it, the CUDA side throws RunFailure saying why).
#include <functional>
#include <span>
#include <string_view>

#include "engine/backend.h"
#include "engine/measure.h"
#include "kernels/matmul/tile_math.h"

namespace dlsys::matmul {

struct VariantInfo {
  std::string_view key;       // the `impl` choice and the JSON prefix: "naive" -> naive_gflops
  std::string_view cpu_name;  // the kernel as the code names it on each backend
  std::string_view cuda_name;
};

// naive, tiled, blas: the order the lesson sweeps and reports them.
std::span<const VariantInfo> variants();
std::string_view kernel_name(const VariantInfo& variant, BackendKind backend);

// Times `variant` on `backend` (options.warmup untimed calls, then options.repeats timed); `c` receives the product.
// `threads` applies to the CPU variants. `check_cancelled` runs between repeats on the CPU and once before a CUDA run.
TimingStats time_variant(const VariantInfo& variant, BackendKind backend, const Shape& shape, const float* a,
                         const float* b, float* c, int threads, const MeasureOptions& options,
                         const std::function<void()>& check_cancelled);

}  // namespace dlsys::matmul
