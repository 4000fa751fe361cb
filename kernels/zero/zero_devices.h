#pragma once
// The two places the ZeRO lesson trains its stack, behind one interface its run is written against (a template over
// the device): a device trains one configuration at one stage on N ranks and says where they ran; the facts a run
// reports of it (its timer, whether its ranks are emulated, its notes) are its constants and members.
//   CpuZero   N CPU rank threads (sharded_training.h), each with its own memory ledger, timed with steady_clock.
//   CudaZero  N GPU ranks, or streams of one GPU (zero_cuda.h), timed with CUDA events on each rank's stream. A thin
//             forwarder to cuda::train_sharded_gpu and cuda::place_ranks.
#include <string>
#include <utility>
#include <vector>

#include "kernels/zero/sharded_training.h"
#include "kernels/zero/zero_cuda.h"
#include "kernels/zero/zero_types.h"

namespace dlsys::zero {

// One configuration trained, and where its ranks ran (empty on the CPU, whose ranks are always threads).
struct RanksTrained {
  ZeroTraining training;
  std::string placement;
};

class CpuZero {
 public:
  static constexpr const char* kTimer = "steady_clock";
  static constexpr bool kOnGpu = false;

  static RanksTrained train(const ZeroConfig& config) { return {train_sharded(config), {}}; }
  // Rank threads share one CPU: always emulated.
  static bool ranks_emulated(int) { return true; }
  // How `ranks` ranks ran, for the run's backend notes.
  static std::vector<std::string> notes(int ranks, const std::string& placement);
};

class CudaZero {
 public:
  static constexpr const char* kTimer = "cuda_event";
  static constexpr bool kOnGpu = true;

  static RanksTrained train(const ZeroConfig& config) {
    cuda::GpuZeroTraining gpu = cuda::train_sharded_gpu(config);
    return {std::move(gpu.training), gpu.placement.description};
  }
  // Emulated when this machine puts the ranks on streams of one GPU.
  static bool ranks_emulated(int ranks) { return cuda::place_ranks(ranks).emulated; }
  // How the ranks ran (`placement` as train() gave it) and how the stages are compared.
  static std::vector<std::string> notes(int ranks, const std::string& placement);
};

}  // namespace dlsys::zero
