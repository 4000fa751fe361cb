#pragma once
// The two places the tensor lesson runs its tensor-parallel layer, behind one interface its run is written against (a
// template over the device): a device makes one configuration's layer on t ranks, and that layer steps all ranks at
// once, says where they ran and how many activation bytes each holds, and checks its results against the unsharded
// layer in double. The facts a run reports of each device (its timer, whether it has thread CPU time, its notes) are
// its constants and members.
//   CpuTensor   t CPU rank threads in one process (tp_layer.h), timed with steady_clock; activations from the run's
//               ledger.
//   CudaTensor  t GPU ranks, or streams of one GPU (tensor_cuda.h), timed with CUDA events on each rank's stream;
//               activations from the GPU layer's own ledger of device memory, results copied back for the check. A
//               thin forwarder to cuda::make_gpu_tensor_layer.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/ledger.h"
#include "kernels/tensor/layer_shape.h"
#include "kernels/tensor/rank_layer.h"
#include "kernels/tensor/step_times.h"
#include "kernels/tensor/tensor_cuda.h"
#include "kernels/tensor/tp_layer.h"

namespace dlsys::tensor {

// Where one configuration's ranks ran.
struct RankPlacement {
  int ranks = 1;
  std::string description;  // for people
  bool emulated = false;    // the ranks share one processor: threads of one CPU, or streams of one GPU
  bool nccl = false;        // collectives by NCCL (bytes then the ring's count for the same call)
};

// One configuration's layer on CPU rank threads, its buffers in the run's ledger.
class CpuRankLayers {
 public:
  CpuRankLayers(const LayerShape& shape, MemoryLedger& ledger) : layer_(shape, ledger), ledger_(ledger) {}

  RankPlacement placement() const;
  // Bytes rank r holds under "activations rank <r>" in the ledger (what the activation formula counts).
  std::int64_t activation_bytes(int rank) const;
  std::vector<RankStepTimes> step() { return layer_.step(); }
  std::vector<TensorError> errors_against(const RankLayer<double>& reference) const {
    return compare_with_reference(layer_, reference);
  }

 private:
  TensorParallelLayer layer_;
  MemoryLedger& ledger_;
};

class CpuTensor {
 public:
  using Layer = CpuRankLayers;
  static constexpr const char* kTimer = "steady_clock";
  static constexpr bool kOnGpu = false;
  // Each rank's step times carry its thread's CPU time beside the wall time.
  static constexpr bool kRanksHaveThreadCpuTime = true;
  // Said of the course's worked example, which runs on two CPU rank threads whatever the backend: nothing here.
  static constexpr std::string_view kCourseExampleNote = "";

  explicit CpuTensor(MemoryLedger& ledger) : ledger_(ledger) {}

  // CPU threads that call OpenBLAS at once for configurations of at most `most_ranks` ranks: one per rank.
  static int blas_rank_threads(int most_ranks) { return most_ranks; }
  // Nothing to explain when per-rank compute at t = 2 is `t2_over_t1` of t = 1's: the run's note on the machine's
  // load says why a CPU's may not fall.
  static std::optional<std::string> compute_scaling_caveat(double, std::int64_t) { return std::nullopt; }
  std::unique_ptr<CpuRankLayers> make_layer(const LayerShape& shape) const {
    return std::make_unique<CpuRankLayers>(shape, ledger_);
  }
  // How the ranks ran and were checked, for the run's backend notes; `ran`: every configuration measured.
  static std::vector<std::string> notes(const std::vector<RankPlacement>& ran);

 private:
  MemoryLedger& ledger_;
};

// One configuration's layer on GPU ranks, its buffers in device memory.
class CudaRankLayers {
 public:
  explicit CudaRankLayers(const LayerShape& shape) : layer_(cuda::make_gpu_tensor_layer(shape)) {}

  RankPlacement placement() const {
    const GpuPlacement& p = layer_->placement();
    return {.ranks = layer_->shape().ranks,
            .description = p.description,
            .emulated = p.emulated,
            .nccl = p.collectives == GpuCollectives::Nccl};
  }
  std::int64_t activation_bytes(int rank) const { return layer_->activation_bytes(rank); }
  std::vector<RankStepTimes> step() { return layer_->step(); }
  // The ranks' results copied back to the host, then compared as the CPU ranks' are.
  std::vector<TensorError> errors_against(const RankLayer<double>& reference) const {
    const std::vector<cuda::HostRankCopy> copies = layer_->results();
    std::vector<RankResults> views;
    for (const cuda::HostRankCopy& c : copies)
      views.push_back({.rank = c.rank,
                       .output = c.output.data(),
                       .input_gradient = c.input_gradient.data(),
                       .grad_wqkv = c.grad_wqkv.data(),
                       .grad_wo = c.grad_wo.data(),
                       .grad_w1 = c.grad_w1.data(),
                       .grad_w2 = c.grad_w2.data(),
                       .grad_norms = c.grad_norms.data()});
    return compare_with_reference(layer_->shape(), views, reference);
  }

 private:
  std::unique_ptr<cuda::GpuTensorLayer> layer_;
};

class CudaTensor {
 public:
  using Layer = CudaRankLayers;
  static constexpr const char* kTimer = "cuda_event";
  static constexpr bool kOnGpu = true;
  // GPU ranks' work is not a thread's: their step times have no CPU time.
  static constexpr bool kRanksHaveThreadCpuTime = false;
  static constexpr std::string_view kCourseExampleNote =
      "four numbers need no GPU: the example runs on the CPU whatever the backend";

  // Only the calling thread calls OpenBLAS (for the double reference): the ranks' GEMMs are cuBLAS's.
  static int blas_rank_threads(int) { return 0; }
  // Why per-rank compute at t = 2 did not fall below 0.9 of t = 1's (`t2_over_t1`) at `hidden`; none when it did.
  static std::optional<std::string> compute_scaling_caveat(double t2_over_t1, std::int64_t hidden);
  static std::unique_ptr<CudaRankLayers> make_layer(const LayerShape& shape) {
    return std::make_unique<CudaRankLayers>(shape);
  }
  // How the ranks ran, where each configuration placed them, how the collectives' bytes are counted.
  static std::vector<std::string> notes(const std::vector<RankPlacement>& ran);
};

}  // namespace dlsys::tensor
