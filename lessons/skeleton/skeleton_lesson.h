#pragma once
// A lesson to copy: y = 2x (scale) or y = 2x + y (axpy) on n floats, its bytes and FLOP from closed forms, and one
// timed, checked call. See skeleton_values.h.
#include "lessons/common/typed_lesson.h"
#include "lessons/skeleton/skeleton_values.h"

namespace dlsys {

class SkeletonLesson final
    : public TypedLesson<skeleton::SkeletonParams, skeleton::SkeletonTheory, skeleton::SkeletonMeasured> {
 public:
  std::string id() const override { return "skeleton"; }
  std::string chapter() const override { return "Foundations"; }
  std::vector<std::string> quick_params() const override { return {"n=4096", "repeats=1"}; }
  // What skeleton_lesson.cpp defines, each signature as typed_lesson.h writes it.
  DLSYS_LESSON_OVERRIDES(params, read_params, theory_of, budget_of, run_with)
  // The skeleton has no CUDA implementation; a lesson with one leaves this out.
  bool runs_on_cuda() const override { return false; }
};

}  // namespace dlsys
