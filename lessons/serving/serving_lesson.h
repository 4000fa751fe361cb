#pragma once
#include "kernels/serving/model.h"
#include "kernels/serving/request_stream.h"
#include "lessons/common/typed_lesson.h"
#include "lessons/serving/serving_params.h"
#include "lessons/serving/serving_values.h"

namespace dlsys {

namespace serving {

struct ServingSteps final : StepData {
  ServingTheory theory;
  std::vector<int> output_tokens;  // the stream's, in arrival order
  int max_batch = 0;
  std::vector<Timeline> schedules;  // theory_timelines: static, continuous in token steps
};

}  // namespace serving

// Lesson `serving` (T5, T7, T26): prefill against decode on the roofline, the KV bytes a decode step reads, static,
// adaptive and continuous batching of a seeded request stream served by a real small transformer on a scheduler
// thread, the KV memory that caps the batch, and speculative decoding with a draft built from the target.
class ServingLesson final : public TypedLesson<serving::ServingParams, serving::ServingTheory, serving::ServingMeasured,
                                               serving::ServingSteps> {
 public:
  std::string id() const override { return "serving"; }
  std::string chapter() const override { return "LLM inference"; }
  std::vector<std::string> quick_params() const override {
    return {"requests=16", "prompt=32", "mean_output=16", "max_output=48", "rate=400", "spec_requests=2"};
  }
  DLSYS_LESSON_OVERRIDES(params, read_params, theory_of, check_params, budget_of, step_data_of, run_with, text_report)
  bool has_timeline() const override { return true; }
  // Static and continuous batching of the stream's output lengths with every request waiting at the start, one
  // token per step: the schedules' shapes in token steps, before any run.
  std::vector<Timeline> theory_timelines(const ParamValues& params) const override;
};

namespace serving {

// The target's later layers' output projections are scaled by this (see kernels/serving/model.h).
inline constexpr float kQuietScale = 0.03f;
// Rates of the latency-throughput curves, as fractions of the chosen rate.
inline constexpr double kCurveRateFractions[] = {0.25, 0.5, 1.0};
// What the lesson expects of the default stream: continuous at least 1.5x static's tokens/s.
inline constexpr double kThroughputRatioBar = 1.5;

ModelShape model_shape(const ServingParams& params);
StreamSpec stream_spec(const ServingParams& params);
// Static and continuous batching of the stream's output lengths with every request waiting at the start.
std::vector<Timeline> schedules_in_token_steps(const ServingParams& params);

}  // namespace serving

}  // namespace dlsys
