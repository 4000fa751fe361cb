#pragma once
#include "lessons/common/typed_lesson.h"
#include "lessons/precision/precision_params.h"
#include "lessons/precision/precision_steps.h"
#include "lessons/precision/precision_values.h"

namespace dlsys {

// Lesson `precision` (course T21): fp32, fp16 and bf16 from their bit layouts; round-to-nearest-even in software, bit
// for bit; a small MLP trained four ways on the same seeded data (fp32, fp16 without and with dynamic loss scaling,
// bf16), every 16-bit tensor rounded as mixed-precision training rounds it, with fp32 master weights.
class PrecisionLesson final : public TypedLesson<precision::PrecisionParams, precision::PrecisionTheory,
                                                 precision::PrecisionMeasured, precision::PrecisionSteps> {
 public:
  std::string id() const override { return "precision"; }
  // Enough steps for the scaler to climb into its first overflow (about step 120 on the default problem).
  std::vector<std::string> quick_params() const override { return {"steps=160", "gemm_n=1024"}; }
  std::string chapter() const override { return "Efficiency"; }
  DLSYS_LESSON_OVERRIDES(params, read_params, theory_of, check_params, budget_of, step_data_of, run_with, text_report)
};

// How many trainings a run makes: fp32, fp16 without and with loss scaling, bf16, and the chosen format with scaling
// when that is not among them.
int precision_trainings(const precision::PrecisionParams& params);
// Seconds a run takes on the CPU: each training step's FLOP at kTiledLoopGflopsPerThread on one thread (the MLP is
// small, OpenBLAS runs on one thread and every 16-bit tensor is rounded in software: about 20 GFLOP/s measured on a
// 2-core EPYC at 200 to 2000 steps), plus the work that does not depend on the steps (every 16-bit pattern rounded,
// the histograms).
double precision_cpu_run_seconds(const precision::PrecisionParams& params);
inline constexpr double kPrecisionFixedSeconds = 0.35;

// What the lesson expects of its default problem: fp16 without scaling ends at least this many times fp32's loss,
// fp16 with scaling within this many percent of it. The text report says the verdict in words.
inline constexpr double kUnscaledWorseAtLeast = 10.0;
inline constexpr double kScaledWithinPercent = 5.0;

}  // namespace dlsys
