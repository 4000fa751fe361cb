#pragma once
#include "lessons/common/typed_lesson.h"
#include "lessons/quant/quant_params.h"
#include "lessons/quant/quant_steps.h"
#include "lessons/quant/quant_values.h"

namespace dlsys {

// Lesson `quant` (course T24, with QLoRA's 4-bit base from T23): integer and NormalFloat quantization of a trained
// model's real weights, error against bits and granularity beside the D^2 / 12 noise, an outlier channel and
// LLM.int8()'s split, int8 and int4 GEMV timed against fp32 and fp16 at batch 1, and 2:4 sparsity.
class QuantLesson final
    : public TypedLesson<quant::QuantParams, quant::QuantTheory, quant::QuantMeasured, quant::QuantSteps> {
 public:
  std::string id() const override { return "quant"; }
  // The default n = 4096 (64 MiB of fp32 weights, past the last-level cache): at n = 1024 the weights sat in the
  // cache and int8 read barely faster than fp32.
  std::vector<std::string> quick_params() const override { return {"model_steps=40", "repeats=10"}; }
  // A GEMV on a GPU reads 8192 x 8192 weights in tens of microseconds: large enough that launching is a small part.
  std::vector<std::string> gpu_params(bool quick) const override {
    return quick ? std::vector<std::string>{"n=4096", "repeats=10"} : std::vector<std::string>{"n=8192", "repeats=20"};
  }
  std::string chapter() const override { return "Efficiency"; }
  DLSYS_LESSON_OVERRIDES(params, read_params, theory_of, check_params, budget_of, step_data_of, run_with, text_report)
};

// What the lesson expects: int8 GEMV at 4096 x 4096 at least this many times faster than fp32, measured in
// the same run. The text report says the verdict in words.
inline constexpr double kInt8GemvSpeedupAtLeast = 2.0;

}  // namespace dlsys
