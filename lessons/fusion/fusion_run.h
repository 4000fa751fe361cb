#pragma once
// A fusion run: every kernel pair timed on the CPU worker pool, outputs checked against double references.
#include "engine/params.h"
#include "engine/run_result.h"
#include "lessons/common/lesson.h"
#include "lessons/fusion/fusion_params.h"

namespace dlsys::fusion {

// Bytes a run holds at once (four arrays of rows x cols, the full bias among them, and the small arrays).
double run_bytes(const FusionParams& params);
// Seconds a run needs at least: every pass's bytes, each timed call and warm-up, at 1 GB/s.
double run_seconds_estimate(const FusionParams& params);

// Fills result's theory (already set), measured values, series and notes.
void run_fusion(const FusionParams& params, RunContext& ctx, RunResult& result);

}  // namespace dlsys::fusion
