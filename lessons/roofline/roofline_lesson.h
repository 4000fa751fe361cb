#pragma once
#include "lessons/common/typed_lesson.h"
#include "lessons/roofline/roofline_params.h"
#include "lessons/roofline/roofline_steps.h"
#include "lessons/roofline/roofline_values.h"

namespace dlsys {

// Lesson `roofline`: compute, bandwidth and overhead; the course's arithmetic; this machine's roof measured with
// STREAM and independent FMA chains; a sweep of intensity along it; the lab's own kernels placed on it; the
// overhead floor of tiny calls.
class RooflineLesson final : public TypedLesson<roofline::RooflineParams, roofline::RooflineTheory,
                                                roofline::RooflineMeasured, roofline::RooflineSteps> {
 public:
  std::string id() const override { return "roofline"; }
  std::string chapter() const override { return "Foundations"; }
  std::vector<std::string> quick_params() const override {
    // STREAM arrays of 64 MiB, twice the last-level cache of a typical laptop or small server: at 16 MiB they sat
    // in the cache and the bandwidth read high.
    return {"k=1,4,16,64",   "bytes=64MiB",      "gemm_n=96",          "attention_n=192",
            "model_dim=512", "prompt_tokens=32", "tiny_sizes=1..4096", "repeats=1"};
  }
  // Sizes that fill a GPU: STREAM arrays far past the L2 cache (quick: 256 MiB, five times an H100's 50 MB; the CPU's
  // quick 64 MiB would barely pass it), matmul and attention long enough that launching is a small part (their double
  // references stay on the CPU, which bounds them), a decode GEMV over 512 MiB of weights and a prefill of 512 tokens.
  std::vector<std::string> gpu_params(bool quick) const override {
    if (quick) return {"bytes=256MiB", "gemm_n=512", "attention_n=1024", "model_dim=4096", "prompt_tokens=128"};
    return {"bytes=512MiB", "gemm_n=1024", "attention_n=4096", "model_dim=4096", "prompt_tokens=512"};
  }
  DLSYS_LESSON_OVERRIDES(params, read_params, theory_of, budget_of, step_data_of, run_with, text_report)
};

// What the report calls on target: no measured point more than 15% above the roof, and the sweep's bend within a
// factor 2 of peak / bandwidth.
inline constexpr double kRoofTolerancePercent = 15;
inline constexpr double kRidgeFactor = 2;

// Given the ceilings in `m` (peak_gflops, bandwidth_gbps), fills every point's roof and share of it, the point
// furthest above the roof, the sweep's bend (bandwidth of its lowest-intensity point, its highest GFLOP/s, their
// ratio) and whether both expectations hold.
void place_on_roof(roofline::RooflineMeasured& m);

}  // namespace dlsys
