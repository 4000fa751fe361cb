#pragma once
#include "kernels/decoder/shape.h"
#include "lessons/common/typed_lesson.h"
#include "lessons/kvcache/kv_theory.h"
#include "lessons/kvcache/kvcache_params.h"
#include "lessons/kvcache/kvcache_steps.h"
#include "lessons/kvcache/kvcache_values.h"

namespace dlsys {

// Lesson `kvcache`: what a KV cache holds and costs for real models (exact sizes, what fits, paged blocks), and a
// real small decoder timed with and without its cache.
class KvCacheLesson final : public TypedLesson<kvcache::KvCacheParams, kvcache::KvCacheTheory, kvcache::KvCacheMeasured,
                                               kvcache::KvCacheSteps> {
 public:
  std::string id() const override { return "kvcache"; }
  // 64 tokens, where recomputing does 57x the FLOPs of a cached step: at 32 (29x) the cache's lead on a 2-core machine
  // was 4.3-6.3x, close enough to the lesson's 5x for noise to cross it.
  std::vector<std::string> quick_params() const override { return {"tokens=64", "repeats=1"}; }
  std::string chapter() const override { return "LLM inference"; }
  // theory_of: the sizing of the parameters' model and of the live decoder, from the closed forms.
  // check_params: the model's sizes (a sequence past its trained length, products past 64 bits) and the live
  // decoder's shape.
  // budget_of: the live decoder's weights, cache and scratch in host memory, and its time; it runs on the CPU on
  // every backend.
  DLSYS_LESSON_OVERRIDES(params, read_params, theory_of, check_params, budget_of, step_data_of, run_with, text_report)
};

namespace kvcache {
// The model the parameters name: the config file when `config` is set, else the preset `model`. Throws BadInput.
ModelConfig model_of(const KvCacheParams& params);
// The sizing question the parameters ask (model, types, batch, seq, block, workspace, memory). Throws BadInput.
SizingQuery sizing_query_of(const KvCacheParams& params);
// The memory to fit into and where the figure comes from: gpu_gb in GB when set, else the chosen GPU's datasheet
// memory, or for gpu = this-machine the GPU when one answers, else this machine's host memory.
std::pair<std::int64_t, std::string> memory_to_fit(const KvCacheParams& params);
// The smallest speed-up of the cached last token over the recomputed one that counts as the cache clearly winning
// (recorded in the JSON as speedup_bar; the screen says it in words, from the FLOP ratio).
inline constexpr double kMinCacheSpeedup = 5.0;

// Seconds the live decoder's run takes on the CPU: the warm-up (both paths over the first kLiveWarmupTokens
// positions), every position of every repeat on both paths, and the last step timed max(repeats, kLastStepRepeats) + 1
// times on each. A step costs its FLOP at kDecoderGflops plus kSecondsPerScore for each attention score (an exp and
// the softmax's bookkeeping, which at small head sizes cost more than the score's FLOP). One thread's rate: at batch
// 1 OpenBLAS's threads gained nothing on a 2-core EPYC, where 24 GFLOP/s and 11 ns came within 1.5x of d_model 64 to
// 1024 and 128 to 1024 tokens.
double live_run_seconds(const decoder::Shape& shape, std::int64_t tokens, int repeats);
inline constexpr double kDecoderGflops = 24;
inline constexpr double kSecondsPerScore = 11e-9;
}  // namespace kvcache

}  // namespace dlsys
