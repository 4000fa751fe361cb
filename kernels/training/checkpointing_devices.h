#pragma once
// The two places the checkpointing lesson trains its stack, with the same methods (its run is a template over them):
// one step with or without checkpoints, the forward pass alone, the last step's loss and gradients, and the timer of
// one call.
//   CpuCheckpointing   train_step on OpenBLAS (checkpointed_step.h), each call timed with steady_clock.
//   CudaCheckpointing  the same step on GPU 0 (checkpointed_step_cuda.h), each call timed with CUDA events around
//                      what it enqueued; the weights and the batch uploaded once.
// Both count the step's activations in the ledger they are given, under the same tags at the same moments.
#include <memory>
#include <vector>

#include "engine/ledger.h"
#include "engine/measure.h"
#include "kernels/common/device_buffer.h"
#include "kernels/training/checkpointed_step.h"
#include "kernels/training/checkpointed_step_cuda.h"
#include "kernels/training/mlp_stack.h"

namespace dlsys::training {

class CpuCheckpointing {
 public:
  static constexpr const char* kTimer = "steady_clock";
  static constexpr bool kOnGpu = false;
  CpuCheckpointing(const StackShape& shape, const std::vector<float>& weights, const DataSet& data, int rows,
                   MemoryLedger& ledger)
      : shape_(shape),
        weights_(weights),
        data_(data),
        rows_(rows),
        ledger_(ledger),
        gradients_(std::size_t(parameter_count(shape))) {}

  CallTimer timer() const { return {}; }
  void step(int segment_layers) {
    loss_ = train_step(shape_, weights_.data(), data_.inputs.data(), data_.targets.data(), rows_, segment_layers,
                       ledger_, gradients_.data());
  }
  // Every activation kept, in a buffer made on the first call (a warm-up) and kept for the next ones.
  void forward() {
    if (!forward_acts_) forward_acts_ = std::make_unique<Activations>(shape_, rows_);
    training::forward(shape_, flat_weights(shape_, weights_.data()), data_.inputs.data(), data_.targets.data(), rows_,
                      *forward_acts_);
  }
  double loss() const { return loss_; }
  void gradients(std::vector<float>& out) const { out = gradients_; }

 private:
  StackShape shape_;
  const std::vector<float>& weights_;
  const DataSet& data_;
  int rows_;
  MemoryLedger& ledger_;
  std::vector<float> gradients_;
  double loss_ = 0;
  std::unique_ptr<Activations> forward_acts_;
};

class CudaCheckpointing {
 public:
  static constexpr const char* kTimer = "cuda_event";
  static constexpr bool kOnGpu = true;
  CudaCheckpointing(const StackShape& shape, const std::vector<float>& weights, const DataSet& data, int rows,
                    MemoryLedger& ledger)
      : stack_(cuda::make_gpu_stack(shape, weights.data(), data.inputs.data(), data.targets.data(), rows, ledger)),
        parameters_(std::size_t(parameter_count(shape))) {}

  CallTimer timer() const { return dlsys::cuda::cuda_event_timer(); }
  void step(int segment_layers) { stack_->step(segment_layers); }
  void forward() { stack_->forward(); }
  double loss() const { return stack_->loss(); }
  void gradients(std::vector<float>& out) const {
    out.resize(parameters_);
    stack_->gradients(out.data());
  }

 private:
  std::unique_ptr<cuda::GpuStack> stack_;
  std::size_t parameters_;
};

}  // namespace dlsys::training
