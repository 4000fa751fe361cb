#pragma once
#include "lessons/common/typed_lesson.h"
#include "lessons/matmul/matmul_params.h"
#include "lessons/matmul/matmul_steps.h"
#include "lessons/matmul/matmul_values.h"

namespace dlsys {

// Lesson `matmul`: the O(mnk) cost of C = A B, measured for a naive loop, a tiled kernel and the vendor library; on a
// GPU, for the whole kernel ladder of kernels/matmul/ladder.h.
class MatmulLesson final
    : public TypedLesson<matmul::MatmulParams, matmul::MatmulTheory, matmul::MatmulMeasured, matmul::MatmulSteps> {
 public:
  std::string id() const override { return "matmul"; }
  std::vector<std::string> quick_params() const override {
    // Large enough that the operands leave the L2 cache and every size in the fit is compute-bound: at 16..128
    // the sweep measured call overheads (a slope near 1) and the naive loop beat its memory roof from cache.
    return {"sizes=128,256,512,768", "repeats=1"};
  }
  // On a GPU the CPU's sizes are over in microseconds: 4096^3 (a second of fp32 work for the naive kernels, a few
  // milliseconds for cuBLAS) and a sweep to 8192, where every rung's time follows n^3 and cuBLAS is far from
  // launch-bound. The slowest rungs leave the sweep's largest sizes (see run_sweep).
  std::vector<std::string> gpu_params(bool quick) const override {
    if (quick) return {"m=2048", "n=2048", "k=2048", "sizes=256..2048", "repeats=3"};
    return {"m=4096", "n=4096", "k=4096", "sizes=512..8192", "repeats=10"};
  }
  std::string chapter() const override { return "Foundations"; }
  DLSYS_LESSON_OVERRIDES(params, read_params, theory_of, budget_of, step_data_of, run_with)
};

// The tile edge (elements) the lesson's tiling step and theory use for the tiled traffic count.
inline constexpr int kMatmulTheoryTile = 64;

// Least-squares slope of log(y) against log(x): the exponent of a power law y ~ x^slope.
double fit_log_log_slope(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace dlsys
