#pragma once
#include "kernels/attention/tile_math.h"
#include "lessons/common/typed_lesson.h"
#include "lessons/flash/flash_params.h"
#include "lessons/flash/flash_steps.h"
#include "lessons/flash/flash_values.h"

namespace dlsys {

// Lesson `flash` (course T8): standard attention materialises n x n scores; FlashAttention folds tiles of scores into
// the output with the online softmax. Both run for real; the tiled kernel's per-tile state can be traced
// (kernels/attention/trace.h: trace_flash, trace_worked_example) for the step views.
class FlashLesson final
    : public TypedLesson<flash::FlashParams, flash::FlashTheory, flash::FlashMeasured, flash::FlashSteps> {
 public:
  std::string id() const override { return "flash"; }
  // Calls of milliseconds, three of each: at n = 256 one call of a few hundred microseconds per size left the sweep
  // out of order.
  std::vector<std::string> quick_params() const override { return {"n=1024", "sizes=256..1024", "repeats=3"}; }
  // A GPU is filled by 16 heads at n = 4096 (the peers' shape), compared in bf16 on the tensor cores; the sweep runs
  // to n = 16384, where standard attention's scores take 25 GB of device memory.
  std::vector<std::string> gpu_params(bool quick) const override {
    if (quick) return {"heads=16", "n=1024", "sizes=512..2048", "precision=bf16", "repeats=3"};
    return {"heads=16", "n=4096", "sizes=1024..16384", "precision=bf16", "repeats=10"};
  }
  std::string chapter() const override { return "LLM inference"; }
  // check_params: what the backend's kernels cannot run, tiles that do not fit on chip, sizes that do not fit in
  // memory.
  DLSYS_LESSON_OVERRIDES(params, read_params, theory_of, check_params, budget_of, step_data_of, run_with, text_report)
};

// What the parameters say about the tiles: M (elements), Algorithm 1's sizes or the br/bc overrides, the loop order.
struct FlashTileChoice {
  std::int64_t sram_elements = 0;
  attention::Tiling tiling;
  attention::LoopOrder order = attention::LoopOrder::QOuter;
};
FlashTileChoice flash_tile_choice(const flash::FlashParams& params);

// The closed forms at the parameters' n, d, tiles and order.
flash::FlashTheory flash_theory(const flash::FlashParams& params);

// What the lesson expects of FlashAttention on the CPU: about as fast as standard attention (time ratio at most
// this), and scratch memory smaller by the closed form's ratio at the run's own sizes (measured peaks at least this
// share of it). The text report says the verdict in words; these numbers stay out of what a student reads.
inline constexpr double kFlashMaxTimeRatio = 1.1;
inline constexpr double kFlashScratchShareOfTheory = 0.9;
// Said where a GPU run used the plain fp32 kernel (a d without a register-tile fast path): its time compares cuBLAS
// with a teaching kernel.
inline constexpr const char* kFlashPlainKernelCaveat =
    "at this d the GPU ran the plain v2_flash kernel (the fast ones take d = 32, 64 or 128): one loop over shared "
    "memory per score, without register tiles or tensor cores, so its time compares cuBLAS with a teaching kernel; "
    "what it shows is memory: no n x n scores in device memory at all, its tiles live in shared memory";

}  // namespace dlsys
