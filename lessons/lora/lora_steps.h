#pragma once
// What the LoRA steps draw before a run: the closed forms at the parameters (trainable counts against r, each
// method's bytes by tag, the base's bits per parameter, the course's numbers and the real-model calculator).
#include <memory>

#include "lessons/common/step_data.h"
#include "lessons/lora/lora_values.h"

namespace dlsys::lora_lesson {

struct LoraSteps final : StepData {
  LoraTheory theory;
};

}  // namespace dlsys::lora_lesson
