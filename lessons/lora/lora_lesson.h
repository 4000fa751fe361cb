#pragma once
#include "lessons/common/typed_lesson.h"
#include "lessons/lora/lora_params.h"
#include "lessons/lora/lora_steps.h"
#include "lessons/lora/lora_values.h"

namespace dlsys {

// Lesson `lora` (course T23): fine-tuning a frozen layer by training a low-rank update W + (alpha / r) B A instead of
// its weights. A run trains one layer toward a target W* = W + a rank-4 update + noise fully, with LoRA at r = 1, 2,
// 4, 8, 16 and with QLoRA (an NF4 base with double-quantized scales, dequantized in every forward pass): the loss
// against the steps, the final loss against r with its knee at the true rank beside Eckart and Young's least loss,
// each training's memory ledger beside the closed forms, and the merged weight checked against the adapter path. A
// calculator sizes the same three methods for a real model. The trainings run on the CPU (OpenBLAS) on every backend;
// on CUDA the inference (the adapter path against the merged weight) is timed on GPU 0 with cuBLAS.
class LoraLesson final : public TypedLesson<lora_lesson::LoraParams, lora_lesson::LoraTheory, lora_lesson::LoraMeasured,
                                            lora_lesson::LoraSteps> {
 public:
  std::string id() const override { return "lora"; }
  std::vector<std::string> quick_params() const override { return {"d=64", "k=64", "steps=150"}; }
  // The inference layer on a GPU: cuBLAS runs the CPU's 1024 x 1024 projection of 256 tokens in about 30 us, where
  // each of the adapter's two extra calls costs a launch of several microseconds and the measured extra time read
  // +26-43 % (an H100) against the under-a-tenth the multiply-adds allow. A 4096-wide projection (a 7B model's
  // hidden size) of 1024 tokens takes about 0.7 ms, so the extra calls' fixed costs fall to a few percent.
  std::vector<std::string> gpu_params(bool quick) const override {
    if (quick) return {"d=64", "k=64", "steps=150", "serve_width=4096", "serve_tokens=512"};
    return {"serve_width=4096", "serve_tokens=1024"};
  }
  std::string chapter() const override { return "Efficiency"; }
  DLSYS_LESSON_OVERRIDES(params, read_params, theory_of, check_params, budget_of, step_data_of, run_with, text_report)
};

// The ranks every run trains LoRA at.
inline const std::vector<int> kSweptRanks{1, 2, 4, 8, 16};
// The knee: the least swept r whose final loss is within this factor of the largest swept r's.
inline constexpr double kKneeFactor = 1.5;

}  // namespace dlsys
