// The notes each ZeRO device (zero_devices.h) gives a run. No CUDA call is made here.
#include "kernels/zero/zero_devices.h"

#include <fmt/format.h>

#include "engine/backend.h"

namespace dlsys::zero {

std::vector<std::string> CpuZero::notes(int ranks, const std::string&) {
  const int hardware = describe_cpu().threads;
  std::vector<std::string> out{
      "ranks: CPU threads (one OpenBLAS thread each), each with its own memory ledger; collectives: the lab's ring"};
  if (ranks > hardware)
    out.push_back(fmt::format("{} ranks time-share {} hardware threads: the timeline's gaps include waiting for a core",
                              ranks, hardware));
  return out;
}

std::vector<std::string> CudaZero::notes(int, const std::string& placement) {
  return {"ranks on the GPU: " + placement,
          "each rank: one stream, its GEMMs on cuBLAS (fp32, no TF32), real 2-byte weights and gradients, every "
          "cudaMalloc counted in its ledger by tag; times from CUDA events, each rank's timeline from its own step "
          "start",
          "stages compared with GPU stage 0; GPU stage 0 compared with CPU stage 0 (max_rel_err_gpu_vs_cpu_stage0): "
          "close, not bit-identical, since cuBLAS sums in another order and Adam's first steps follow the gradient's "
          "sign"};
}

}  // namespace dlsys::zero
