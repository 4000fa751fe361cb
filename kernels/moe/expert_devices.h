#pragma once
// The two places the moe lesson runs its experts' MLPs (and the dense MLP beside them), with the same methods; the
// rank threads, the router and the all-to-alls stay on the CPU either way.
//   CpuMoeExperts   OpenBLAS on each rank's thread (CpuExpertMlps), timed with steady_clock.
//   CudaMoeExperts  cuBLAS on GPU 0 (experts_cuda.h): every rank's experts there, so the ranks are emulated; the
//                   routed rows uploaded and the outputs downloaded on each call; timed with CUDA events recorded on
//                   the default stream around the call from the host.
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
  static std::unique_ptr<ExpertMlps> make(const Experts& experts, int ranks, std::int64_t) {
    return std::make_unique<CpuExpertMlps>(experts, ranks);
  }
  // What times the experts: the run's own timer for the rank threads.
  static CallTimer timer(const CallTimer& ranks_timer) { return ranks_timer; }
};

struct CudaMoeExperts {
  static constexpr bool kOnGpu = true;
  static std::unique_ptr<ExpertMlps> make(const Experts& experts, int ranks, std::int64_t max_rows) {
    return cuda::make_gpu_experts(experts, ranks, max_rows);
  }
  static CallTimer timer(const CallTimer&) { return dlsys::cuda::cuda_event_timer(); }
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
