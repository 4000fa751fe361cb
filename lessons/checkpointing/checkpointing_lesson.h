#pragma once
#include "lessons/checkpointing/checkpointing_params.h"
#include "lessons/checkpointing/checkpointing_steps.h"
#include "lessons/checkpointing/checkpointing_values.h"
#include "lessons/common/typed_lesson.h"

namespace dlsys {

// Lesson `checkpointing` (T22): activation checkpointing. A training step of the lab's residual MLP stack keeps every
// layer's activations, or only every k-th layer's input, rebuilding each segment in the backward pass; the memory
// ledger's peak against k beside L/k + (1 + e) k, the step time beside one extra forward pass (4/3), gradients equal
// bit for bit; and a calculator for a real model with no, selective and full recompute. On the CPU or on GPU 0 (cuBLAS,
// activations in device memory counted in the same ledger).
class CheckpointingLesson final
    : public TypedLesson<checkpointing::CheckpointingParams, checkpointing::CheckpointingTheory,
                         checkpointing::CheckpointingMeasured, checkpointing::CheckpointingSteps> {
 public:
  std::string id() const override { return "checkpointing"; }
  std::string chapter() const override { return "Efficiency"; }
  std::vector<std::string> quick_params() const override { return {"width=128", "rows=32", "repeats=5"}; }
  DLSYS_LESSON_OVERRIDES(params, read_params, theory_of, check_params, budget_of, step_data_of, run_with, text_report)
};

// Seconds a run takes: for each divisor k of L, a checked step of each kind and (1 + repeats) timed pairs of the plain
// step (3 forwards' FLOP) and the checkpointed one (4), at kBlasGflopsPerThread on one thread. On CUDA the CPU runs
// one plain step, the reference the GPU's gradients are held against.
double checkpointing_cpu_run_seconds(const checkpointing::CheckpointingParams& params, BackendKind backend);

}  // namespace dlsys
