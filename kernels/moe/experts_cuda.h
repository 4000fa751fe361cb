#pragma once
// The experts' MLPs on GPU 0, for code that never includes a CUDA header: y = relu(x W1) W2 over the rows routed to an
// expert, on cuBLAS (fp32, no TF32). Without the CUDA library the call (cuda/experts_cuda_calls.cpp) throws RunFailure
// saying why.
//
// Each rank is a host thread with its own stream, cuBLAS handle and row buffers on its GPU. On one GPU for all ranks
// (emulated ranks), the streams wait for the legacy default stream and it for them, so a CUDA event pair recorded
// there from the host (cuda_event_timer) brackets every rank's work in between. With a GPU per rank each GPU holds
// every expert's weights, and as each call returns with its outputs on the host, a host clock times them.
#include <cstdint>
#include <memory>

#include "kernels/moe/experts.h"

namespace dlsys::moe::cuda {

class GpuExperts : public ExpertMlps {
 public:
  // On rank `rank`'s stream: x's rows uploaded, x W1_e, a ReLU kernel, times W2_e, y downloaded; returns once y is on
  // the host. At most max_rows rows a call.
  void forward(int rank, int expert, const float* x, std::int64_t rows, float* y) override = 0;
  // Bytes allocated on GPU 0 (weights and every rank's row buffers), cuBLAS's own workspace not included.
  std::int64_t device_bytes() const override = 0;
};

// Rank r on GPU r mod `devices` (1: every rank on GPU 0). Uploads every expert's weights once to each of the GPUs and
// allocates, for each of `ranks` ranks, buffers for `max_rows` rows on its GPU. Device memory is freed on every path,
// also when this throws.
std::unique_ptr<GpuExperts> make_gpu_experts(const Experts& experts, int ranks, std::int64_t max_rows, int devices);

// What make_gpu_experts allocates over all its GPUs: 4 (devices E 2 H F + ranks max_rows (2 H + F)) bytes.
constexpr std::int64_t gpu_experts_bytes(int experts, std::int64_t hidden, std::int64_t ffn, int ranks,
                                         std::int64_t max_rows, int devices = 1) {
  return 4 * (std::int64_t(devices) * experts * 2 * hidden * ffn + std::int64_t(ranks) * max_rows * (2 * hidden + ffn));
}

}  // namespace dlsys::moe::cuda
