#pragma once
// What the mixture-of-experts lesson's steps draw before a run: the closed forms at the parameters and the knobs the
// run reads (the balance loss, the skew). Everything else is measured.
#include <memory>

#include "lessons/common/step_data.h"
#include "lessons/moe/moe_params.h"
#include "lessons/moe/moe_values.h"

namespace dlsys::moe_lesson {

struct MoeSteps final : StepData {
  MoeTheory theory;
  bool aux_loss = false;
  double skew = 0;
};

}  // namespace dlsys::moe_lesson
