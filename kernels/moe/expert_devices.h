#pragma once
// The two places the moe lesson runs its experts' MLPs (and the dense MLP beside them), with the same methods; the
// rank threads, the router and the all-to-alls stay on the CPU either way.
//   CpuMoeExperts   OpenBLAS on each rank's thread (CpuExpertMlps), timed with steady_clock.
//   CudaMoeExperts  cuBLAS (experts_cuda.h): every rank on GPU 0 (emulated ranks), or a GPU per rank; the routed
//                   rows uploaded and the outputs downloaded on each call. On one GPU timed with CUDA events recorded
//                   on its default stream around the call from the host; on a GPU per rank with the ranks' own
//                   clock, as each call returns with its outputs on the host.
// ExpertsCheckedOnCpu runs a device's MLPs and, while checking, holds each call's outputs against the CPU's
// (check_mlp_outputs).
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/measure.h"
#include "kernels/common/device_buffer.h"
#include "kernels/moe/experts.h"
#include "kernels/moe/experts_cuda.h"

namespace dlsys::moe {

struct CpuMoeExperts {
  static constexpr bool kOnGpu = false;
  std::unique_ptr<ExpertMlps> make(const Experts& experts, int ranks, std::int64_t) const {
    return std::make_unique<CpuExpertMlps>(experts, ranks);
  }
  // What times the experts: the run's own timer for the rank threads.
  CallTimer timer(const CallTimer& ranks_timer) const { return ranks_timer; }
};

struct CudaMoeExperts {
  static constexpr bool kOnGpu = true;
  int devices = 1;  // 1: every rank on GPU 0; else rank r on GPU r
  std::unique_ptr<ExpertMlps> make(const Experts& experts, int ranks, std::int64_t max_rows) const {
    return cuda::make_gpu_experts(experts, ranks, max_rows, devices);
  }
  CallTimer timer(const CallTimer& ranks_timer) const {
    return devices == 1 ? dlsys::cuda::cuda_event_timer() : ranks_timer;
  }
};

// `device`'s MLPs; while checking is on, each call's outputs checked against mlp_forward on this CPU (per rank, so the
// ranks check at once). Off, a call is the device's alone, so timed calls pay nothing for the check.
class ExpertsCheckedOnCpu final : public ExpertMlps {
 public:
  ExpertsCheckedOnCpu(ExpertMlps& device, const Experts& experts, int ranks)
      : device_(device),
        experts_(experts),
        cpu_(experts, ranks),
        reference_(std::size_t(ranks)),
        checks_(std::size_t(ranks)) {}
  void forward(int rank, int expert, const float* x, std::int64_t rows, float* y) override;
  // Between calls only.
  void set_checking(bool on) { checking_ = on; }
  // Every checked call's check so far, over all ranks.
  MlpCheck check() const;

 private:
  ExpertMlps& device_;
  const Experts& experts_;
  CpuExpertMlps cpu_;
  std::vector<std::vector<float>> reference_;  // per rank: the CPU's outputs of the last call
  std::vector<MlpCheck> checks_;               // per rank
  bool checking_ = true;
};

}  // namespace dlsys::moe
