#pragma once
#include "lessons/common/typed_lesson.h"
#include "lessons/fusion/fusion_params.h"
#include "lessons/fusion/fusion_steps.h"
#include "lessons/fusion/fusion_values.h"

namespace dlsys {

// Lesson `fusion`: y = ReLU(x + b) and x.cos().cos() as separate kernels and fused into one, measured on arrays far
// larger than the caches and on arrays that fit in them; chains of L pointwise operations; every output checked
// against a double-precision reference.
class FusionLesson final
    : public TypedLesson<fusion::FusionParams, fusion::FusionTheory, fusion::FusionMeasured, fusion::FusionSteps> {
 public:
  std::string id() const override { return "fusion"; }
  std::string chapter() const override { return "Foundations"; }
  std::vector<std::string> quick_params() const override {
    // The default size (fusion_size.h: the course's 4096 x 4096, or larger where the three arrays fit in the
    // last-level cache): at 1024 x 1024 the arrays sat in cache and the fused kernel with a full bias measured slower
    // than the two passes it replaces.
    return {"chain=1,2,4", "repeats=3"};
  }
  // On a GPU a pass over 4096 x 4096 takes tens of microseconds; at 8192 x 8192 (256 MiB per array) a launch is well
  // under a percent of it. Quick runs keep 4096 x 4096: still four times the L2 cache per array.
  std::vector<std::string> gpu_params(bool quick) const override {
    return quick ? std::vector<std::string>{"rows=4096", "cols=4096"}
                 : std::vector<std::string>{"rows=8192", "cols=8192", "repeats=10"};
  }
  DLSYS_LESSON_OVERRIDES(params, read_params, theory_of, check_params, budget_of, step_data_of, run_with, text_report)
};

// What the report calls on target: with a broadcast bias on arrays past the last-level cache, the measured speedup
// within 20% of the byte ratio.
inline constexpr double kSpeedupTolerance = 0.2;

// The closed forms for the parameters.
fusion::FusionTheory fusion_theory(const fusion::FusionParams& params);

}  // namespace dlsys
