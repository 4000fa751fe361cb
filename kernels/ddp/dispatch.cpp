// The ddp devices (ddp_devices.h): ranks as threads of this CPU, and ranks on GPUs.
#include <fmt/format.h>

#include "kernels/ddp/ddp_cuda.h"
#include "kernels/ddp/ddp_devices.h"
#include "kernels/ddp/trainer.h"

namespace dlsys::ddp {

namespace {

class CpuDdp final : public DdpDevice {
 public:
  const char* timer() const override { return "steady_clock"; }
  bool on_gpu() const override { return false; }
  TrainResult train(const TrainConfig& config, const training::DataSet& data, MemoryLedger& ledger,
                    std::string*) const override {
    return ddp::train(config, data, ledger);
  }
  std::optional<bool> communication_core_set_aside(const TrainResult& result) const override {
    return result.communication_core_set_aside;
  }
  bool emulated(int) const override { return true; }  // every rank shares this one CPU
  std::vector<std::string> notes(const TrainConfig&, const TrainResult& chosen_result,
                                 const std::string&) const override {
    std::vector<std::string> out{
        "ranks as threads on this CPU: per rank a compute thread (one OpenBLAS thread) and, in DDP, a communication "
        "thread running the lab's ring through shared memory"};
    if (chosen_result.communication_core_set_aside)
      out.push_back(
          "no core to spare: one core is kept for the communication threads (as a GPU's all-reduce has a stream of "
          "its own) and the compute threads of every mode share the others");
    return out;
  }
};

class CudaDdp final : public DdpDevice {
 public:
  const char* timer() const override { return "cuda_event"; }
  bool on_gpu() const override { return true; }
  TrainResult train(const TrainConfig& config, const training::DataSet& data, MemoryLedger& ledger,
                    std::string* placement) const override {
    cuda::GpuTrainResult gpu = cuda::train_gpu(config, data, ledger);
    if (placement) *placement = gpu.placement.description;
    return std::move(gpu.result);
  }
  std::optional<bool> communication_core_set_aside(const TrainResult&) const override { return std::nullopt; }
  bool emulated(int ranks) const override { return cuda::place_ranks(ranks).emulated; }
  std::vector<std::string> notes(const TrainConfig& chosen, const TrainResult&,
                                 const std::string& placement) const override {
    return {"ranks on the GPU: " + placement,
            "per rank a compute stream (forward and backward on cuBLAS, fp32 without TF32) and a communication stream "
            "that all-reduces each bucket once the event of its last layer's gradient fires; times from CUDA events, "
            "each rank's measured from its own step start",
            kGpuWeightsNote,
            fmt::format("bytes counted for rank {}, at position 0 of the GPU ring, the rank the closed form describes",
                        cuda::gpu_ring_position0_rank(chosen.ranks))};
  }
};

}  // namespace

std::unique_ptr<DdpDevice> make_ddp_device(BackendKind backend) {
  if (backend == BackendKind::Cuda) return std::make_unique<CudaDdp>();
  return std::make_unique<CpuDdp>();
}

}  // namespace dlsys::ddp
