#pragma once
// The ZeRO calculator: per-rank memory of mixed-precision Adam training for a model (a parameter count, a preset or a
// config.json, counted exactly by the KV-cache lesson's counter), N ranks and a stage, against a GPU's memory; the
// smallest N at that stage and the smallest stage at that N that fit.
#include <cstdint>
#include <string>

#include "lessons/zero/zero_params.h"
#include "lessons/zero/zero_values.h"

namespace dlsys::zero_lesson {

// What the calculator needs besides N and the stage.
struct CalculatorInput {
  double parameters = 0;  // Psi
  std::string psi_source;
  bool shape_known = false;  // layers, hidden, heads known: activations can be sized
  std::int64_t layers = 0, hidden = 0, heads = 0;
  std::int64_t micro_batch = 1, seq = 1;
  bool checkpointing = false;
  double gpu_bytes = 0;
  std::string gpu;
};

// Activation bytes per rank: tensor::model_activation_bytes (kernels/tensor/activation_memory.h) with no recompute, or
// full recompute when checkpointing; 0 when the shape is unknown.
double activation_bytes(const CalculatorInput& input);
const char* activation_assumption(bool checkpointing);

// Model states + activations per rank at a stage and N.
double bytes_per_rank(const CalculatorInput& input, int stage, double ranks);
// The smallest N (1 .. 2^40) at `stage` whose bytes per rank fit; 0 when none does.
std::int64_t min_ranks_to_fit(const CalculatorInput& input, int stage);
// The smallest stage that fits at `ranks`; -1 when none does.
int min_stage_to_fit(const CalculatorInput& input, double ranks);

ZeroTheory calculate(const CalculatorInput& input, int ranks, int stage);

// The calculator's input from the lesson's parameters: params, or model / config (which override it) when
// `read_model`. Throws BadInput for an unknown preset or a malformed config.
CalculatorInput calculator_input(const ZeroParams& params, bool read_model = true);

}  // namespace dlsys::zero_lesson
