#pragma once
#include "kernels/tensor/layer_shape.h"
#include "lessons/common/typed_lesson.h"
#include "lessons/tensor/tensor_params.h"
#include "lessons/tensor/tensor_steps.h"
#include "lessons/tensor/tensor_values.h"

namespace dlsys {

// Lesson `tensor` (T17, T18): column and row splits on the course's 4x4 example, the Megatron MLP and attention with
// their all-reduces, scaling against t and h, and sequence parallelism's activation memory, run for real on CPU rank
// threads with the lab's ring collectives, or on GPUs (cuBLAS per rank, NCCL or the lab's ring).
class TensorLesson final
    : public TypedLesson<tensor::TensorParams, tensor::TensorTheory, tensor::TensorMeasured, tensor::TensorSteps> {
 public:
  std::string id() const override { return "tensor"; }
  // Quick runs keep the layer large enough that halving its GEMMs halves a rank's compute (at h = 128, s = 64 the
  // steps' fixed costs held t = 2 at 0.57-0.63 of t = 1, against the 0.6 expected; at h = 512, s = 128 0.51-0.52),
  // and three timed steps, so the fastest of each is one a burst of other work missed.
  std::vector<std::string> quick_params() const override {
    return {"hidden=512", "heads=4", "seq=128", "hidden_sweep=32..64", "repeats=3"};
  }
  std::string chapter() const override { return "Distributed training"; }
  // theory_of: the closed forms at the parameters' shape. check_params and budget_of: the shape rules, the sweep's
  // and the memory a run needs (its messages name the sizes and what lowers them).
  DLSYS_LESSON_OVERRIDES(params, read_params, theory_of, check_params, budget_of, step_data_of, run_with, text_report)
  // On CUDA: the layer's ranks on GPUs (or emulated as streams on one); example = course and mode = theory stay
  // on the CPU.
  bool runs_on_cuda() const override { return true; }
};

// The t the run sweeps (1, 2, 4, and the chosen t), keeping those that divide the heads, in increasing order.
std::vector<int> swept_ranks(const tensor::TensorParams& params);
// The hidden sizes the run sweeps at the chosen t: the parameter's list with the chosen hidden, in increasing order.
std::vector<std::int64_t> swept_hiddens(const tensor::TensorParams& params);

// Every configuration a run measures, in the order it measures them: the chosen one, the other t at the chosen h,
// then the chosen t and t = 1 at the other h.
std::vector<tensor::LayerShape> run_plan(const tensor::TensorParams& params);

// Seconds a run takes on CPU rank threads: every configuration of the plan for repeats + 1 steps and one step of the
// unsharded reference; a step's linears (72 s b h^2 FLOP) at kBlasGflopsPerThread and its attention (12 s^2 b h FLOP,
// head by head, with the softmax and masks) at kTensorAttentionGflops, on one thread's rate (the ranks share the
// cores, and wait for each other at every collective). Fitted to the CPU time of 6 runs on a 2-core EPYC (h 256 to
// 1024, s 256 to 1024, b 1 and 2): within 10%.
double tensor_cpu_run_seconds(const tensor::TensorParams& params);
inline constexpr double kTensorAttentionGflops = 24;

// What the lesson expects of a run at hidden 2048, seq 512, t 2 (DESIGN: printed, never a timed test).
inline constexpr double kComputeRatioBar = 0.6;
inline constexpr double kMaxRelErrBar = 1e-4;
inline constexpr std::int64_t kBarHidden = 2048, kBarSeq = 512;

}  // namespace dlsys
