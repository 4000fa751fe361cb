#pragma once
// What the checkpointing lesson's steps draw before a run: which layers' activations live at each moment of a step
// (the course's L0, L3, L6 picture), the peak against k from the closed form, and the real model's calculator.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/run_result.h"
#include "lessons/checkpointing/checkpointing_params.h"
#include "lessons/checkpointing/checkpointing_values.h"
#include "lessons/common/step_data.h"

namespace dlsys::checkpointing {

// What a layer has in memory at one moment of the step.
enum class Kept { Nothing, Boundary, Everything };  // Boundary: its input only; Everything: its input and hidden

// One moment of a step: what each layer keeps, and the activation bytes that makes.
struct KeptPicture {
  std::string title;
  std::vector<Kept> layers;  // L entries
  bool output_kept = false;  // the stack's output, until the loss's gradient is taken
  int rebuilt_segment = -1;  // the segment the backward pass rebuilds now, or -1
  std::int64_t bytes = 0;
};

struct CheckpointingSteps final : StepData {
  CheckpointingTheory theory;
  KeptPicture keep_all;               // the plain step at the end of its forward pass
  KeptPicture after_forward;          // checkpointed, at the end of the forward pass
  std::vector<KeptPicture> backward;  // checkpointed, while segment S-1, S-2, ..., 0 is rebuilt
  Series peak_formula;                // bytes against every divisor k of L
  Series keep_all_line;               // the plain step's peak at every k
  // (L/k + k) layers' activations: Chen's count, a checkpoint as large as a layer, least at k = sqrt(L).
  Series chen_curve;
  Series time_formula;    // 4/3 at every divisor
  CalculatorTheory gpt3;  // Korthikanti et al.'s GPT-3 175B at s = 2048, b = 1
};

// The pictures and curves at the parameters, from the theory.
std::shared_ptr<const CheckpointingSteps> make_steps(const CheckpointingParams& params,
                                                     const CheckpointingTheory& theory);

// The stack's closed forms (no calculator).
// A curve against k, the layers per segment, as the theory draws it or the run measured it ("theory" | "measured").
Series series_over_k(std::string role, std::string id, std::string name, std::string y_label, std::string y_unit);
CheckpointingTheory stack_theory(const CheckpointingParams& params);
// The calculator for a model shape: layers, hidden, heads at sequence s and micro-batch b.
CalculatorTheory calculator_theory(const std::string& model, std::int64_t layers, std::int64_t hidden,
                                   std::int64_t heads, std::int64_t seq, std::int64_t micro_batch);
// The calculator for the chosen preset or config.json; throws BadInput naming 'config' or 'model'.
CalculatorTheory calculator_of(const CheckpointingParams& params);

}  // namespace dlsys::checkpointing
