#pragma once
#include "lessons/common/lesson.h"
#include "lessons/matmul/matmul_values.h"

namespace dlsys {

// Lesson `matmul`: the O(mnk) cost of C = A B, measured for a naive loop, a tiled kernel and the vendor library.
class MatmulLesson final : public Lesson {
 public:
  std::string id() const override { return "matmul"; }
  std::vector<std::string> quick_params() const override {
    return {"m=96", "n=80", "k=64", "sizes=16..128", "repeats=1"};
  }
  std::string chapter() const override { return "Foundations"; }
  std::vector<ParamSpec> params() const override;
  void validate(const ParamValues& params, BackendKind backend) const override;
  std::shared_ptr<const LessonValues> theory(const ParamValues& params) const override;
  std::shared_ptr<const StepData> step_data(const ParamValues& params) const override;
  RunResult run(RunContext& context) const override;
};

// The tile edge (elements) the lesson's tiling step and theory use for the tiled traffic count.
inline constexpr int kMatmulTheoryTile = 64;

// The closed forms for the parameters' m x n x k (no device peak: that comes with a run).
matmul::MatmulTheory matmul_theory(const ParamValues& params);

// Least-squares slope of log(y) against log(x): the exponent of a power law y ~ x^slope.
double fit_log_log_slope(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace dlsys
