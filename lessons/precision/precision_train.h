#pragma once
// The precision lesson's measured part: the same seeded MLP trained in fp32, fp16 without and with dynamic loss
// scaling, bf16 (and the chosen format and scaling, when it is none of these), with the series the steps plot.
#include <vector>

#include "engine/run_result.h"
#include "lessons/common/run_plan.h"
#include "lessons/precision/precision_params.h"
#include "lessons/precision/precision_values.h"

namespace dlsys::precision {

struct TrainingRuns {
  Training training;
  std::vector<Series> series;
};

// Each training is a part of `plan` weighing 1 (reported every kProgressSteps steps); training_count(params) in all.
TrainingRuns run_trainings(const PrecisionParams& params, RunPlan& plan);
std::size_t training_count(const PrecisionParams& params);
inline constexpr int kProgressSteps = 20;

// The share (percent) of the non-zero values in `gradients` that fp16 flushes to zero, or turns into inf, once they
// are multiplied by 2^scale_log2 (exact: a power of two only moves the exponent).
double fp16_flushed_percent(const std::vector<float>& gradients, int scale_log2);
double fp16_overflow_percent(const std::vector<float>& gradients, int scale_log2);

}  // namespace dlsys::precision
