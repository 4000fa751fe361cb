#pragma once
// checkpointed_step.h's training step on GPU 0, for code that never includes a CUDA header. The step is
// cuda/checkpointed_step_cuda.cu on cuBLAS (cuda/mlp_stack_cuda.h's blocks, fp32, no TF32); the calls reach it through
// cuda/checkpointed_step_calls.cpp, which throws RunFailure saying why where the CUDA library is absent.
//
// The weights, the batch and the gradients are placed on the device once. A step then allocates its activations as
// the CPU step does, buffer by buffer at the same moments, from a stream-ordered memory pool of its own
// (cudaMallocFromPoolAsync and cudaFreeAsync on the step's stream: once the pool has grown, a step waits on no
// allocation), and counts each buffer in the run's ledger under kActivationTag or kWorkspaceTag while it lives. So the
// ledger's peak is the device's activation peak, to the byte step_activation_peak_bytes says. Backward's dL/dy, dL/dz
// and dL/dx, outside the ledger on the CPU too, are allocated once.
//
// A checkpointed step runs the same kernels in the same order on the same values as the plain one (a segment's rebuild
// is its forward again, the loss is summed in a fixed order), so on one GPU its loss and gradients equal the plain
// step's bit for bit. That holds while cuBLAS sees the same pointer alignment in both, which it does when a (rows,
// width) block is a multiple of 16 bytes (4 r w; the lesson's w >= 8 makes it 32): the plain step's blocks sit at
// such offsets in one buffer, the checkpointed step's each start a pool block. Against the CPU's they differ by
// cuBLAS's summation order.
#include <algorithm>
#include <cstdint>
#include <memory>

#include "engine/ledger.h"
#include "kernels/training/mlp_stack.h"
#include "kernels/training/stack_layout.h"

namespace dlsys::training::cuda {

class GpuStack {
 public:
  virtual ~GpuStack() = default;
  // Enqueues one step on the default stream (where cuda_event_timer()'s events are recorded): zeroes the gradients,
  // then runs as train_step with the same segment_layers (kKeepEverything, or k dividing the layers).
  virtual void step(int segment_layers) = 0;
  // Enqueues the forward pass alone with its loss, every activation kept (in a buffer allocated once, outside the
  // ledger, as the CPU run's).
  virtual void forward() = 0;
  // The last step's loss and gradients (parameter_count floats), waiting for it.
  virtual double loss() = 0;
  virtual void gradients(float* host) = 0;
};

// Places `weights` (parameter_count(shape)), `inputs` and `targets` ((rows, width) each) on GPU 0. Throws
// std::invalid_argument for a shape or rows below 1, RunFailure when CUDA fails.
std::unique_ptr<GpuStack> make_gpu_stack(const StackShape& shape, const float* weights, const float* inputs,
                                         const float* targets, int rows, MemoryLedger& ledger);

// Device bytes a GpuStack holds at most, in floats: weights and gradients, the batch, backward's scratch, the forward
// pass's buffer, and the pool's reserve. The pool keeps what it has reserved and may reserve up to twice a step's live
// peak when its blocks fragment; a step holds at most the plain step's activations, or a checkpointed forward's L/k
// checkpoints, output and one-layer workspace, (L + 1 + e + 2) r w floats at k = 1. A cuBLAS handle and its workspace
// come on top: kGpuStackMarginBytes.
inline std::int64_t gpu_stack_floats(const StackShape& shape, int rows) {
  const StackLayout keep_all{shape, rows, false};
  const std::int64_t boundary = keep_all.boundary_floats();
  const std::int64_t step_live = std::max(keep_all.floats(), (shape.layers + 3) * boundary + keep_all.hidden_floats());
  return 2 * parameter_count(shape) + 2 * boundary + keep_all.scratch_floats() + keep_all.floats() + 2 * step_live;
}
inline constexpr std::int64_t kGpuStackMarginBytes = 64ll << 20;
inline std::int64_t gpu_stack_bytes(const StackShape& shape, int rows) {
  return std::int64_t(sizeof(float)) * gpu_stack_floats(shape, rows) + kGpuStackMarginBytes;
}

}  // namespace dlsys::training::cuda
