#pragma once
// The skeleton lesson's types, declared once: its parameters, its closed forms and what a run measures. Copy this
// folder to lessons/<id>/ to start a lesson (README, "How a lesson is added"); the skeleton itself is built and
// tested (tests/test_skeleton_lesson.cpp) but not registered, so it stays true without showing in the lab.
#include <cstdint>

#include "engine/lesson_values.h"

namespace dlsys::skeleton {

// A choice parameter read as an enum, in the order of its spec's `choices`.
enum class Op { Scale, Axpy };

// Read once from the checked values (SkeletonLesson::read_params); the rest of the lesson uses only these fields.
struct SkeletonParams {
  std::int64_t n = 0;  // elements per array
  Op op = Op::Scale;
  int repeats = 0;
  double max_minutes = 0;
};

// Closed forms: written under "theory" with the field names as keys, read back from a recorded run.
struct SkeletonTheory {
  double flop = 0;       // FLOP of one call
  double bytes = 0;      // bytes one call moves through main memory
  double intensity = 0;  // flop / bytes
  int arrays = 0;        // arrays read and written
};
DLSYS_VALUES_JSON(SkeletonTheory, flop, bytes, intensity, arrays)

// What a run measured, under "measured".
struct SkeletonMeasured {
  double time_us = 0, time_min_us = 0, time_max_us = 0;  // median, fastest and slowest call
  double gbps = 0;                                       // theory bytes over the median call
  double max_abs_err = 0;                                // the output against its reference, before timing
  int wrong = 0;                                         // 1 when max_abs_err is over the tolerance
};
DLSYS_VALUES_JSON(SkeletonMeasured, time_us, time_min_us, time_max_us, gbps, max_abs_err, wrong)

}  // namespace dlsys::skeleton
