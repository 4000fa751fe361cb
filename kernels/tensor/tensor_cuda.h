#pragma once
// The transformer layer of rank_layer.h on GPUs, for code that never includes a CUDA header (plain C++17). Without
// the CUDA library each call (cuda/tensor_cuda_calls.cpp) throws RunFailure saying why.
//
// Each of the t ranks keeps its weight shards, activations, gradients and scratch in device memory, the same buffers
// the CPU rank allocates, counted in a ledger under the same tags. Its GEMMs are cuBLAS sgemm calls (fp32, no TF32) on
// its own handle and stream; layer norm, the causal softmax with its dropout, the residual dropouts, GeLU and their
// backwards are small CUDA kernels (one block per row for the row-wise ones). Values are drawn from global indices by
// the functions the CPU ranks use (shard_fill.h on the host, layer_ops.h on the device), so the outputs and gradients
// are compared with the same double reference.
//
// Placement (gpu_plan.h): with t GPUs, rank r on GPU r and the collectives by NCCL when it is compiled, else the lab's
// ring over peer copies. With fewer, every rank is a stream on GPU 0 and the collectives are the lab's ring: each step
// a device-to-device copy of one chunk into the neighbour's landing buffer and an add kernel there, events ordering the
// streams. The ring's bytes are counted from the copies it makes; NCCL's traffic is not visible, so with NCCL the
// bytes are what the ring would copy for the same call.
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/tensor/gpu_plan.h"
#include "kernels/tensor/layer_shape.h"
#include "kernels/tensor/step_times.h"

namespace dlsys::tensor::cuda {

// How this machine would place t ranks. Throws RunFailure when no device answers.
GpuPlacement place_ranks(int ranks);

// One rank's results copied back to the host, in RankLayer's layouts (tp_layer.h's RankResults points into them).
struct HostRankCopy {
  int rank = 0;
  std::vector<float> output, input_gradient, grad_wqkv, grad_wo, grad_w1, grad_w2, grad_norms;
};

class GpuTensorLayer {
 public:
  virtual ~GpuTensorLayer() = default;

  virtual const LayerShape& shape() const = 0;
  virtual const GpuPlacement& placement() const = 0;
  // One forward + backward of every rank; each rank's times from CUDA events on its own stream, in rank order.
  virtual std::vector<RankStepTimes> step() = 0;
  // Bytes rank r allocated on its GPU under "activations" (what the activation formula counts).
  virtual std::int64_t activation_bytes(int rank) const = 0;
  // Every rank's output, input gradient and weight gradients, copied to the host after the last step.
  virtual std::vector<HostRankCopy> results() const = 0;
};
// Allocates and fills every rank's buffers; device memory is freed on every path, also when this throws.
std::unique_ptr<GpuTensorLayer> make_gpu_tensor_layer(const LayerShape& shape);

}  // namespace dlsys::tensor::cuda
