#pragma once
// The two places the ddp lesson's run trains its ranks in one process, behind one interface the run is written
// against (it chooses the device once, by the run's backend):
//   CPU   ranks as threads of this CPU (trainer.h): per rank a compute thread and, in DDP, a communication thread,
//         timed with steady_clock; ranks that share one CPU only emulate as many machines.
//   CUDA  ranks on GPUs (ddp_cuda.h): per rank a compute and a communication stream, timed with CUDA events; a thin
//         forwarder to cuda::train_gpu and cuda::place_ranks.
// Without CUDA in the build (or its library) the CUDA device's calls throw RunFailure saying why, and the CUDA
// backend is never chosen.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/ledger.h"
#include "kernels/ddp/train_types.h"
#include "kernels/training/mlp_stack.h"

namespace dlsys::ddp {

class DdpDevice {
 public:
  virtual ~DdpDevice() = default;
  virtual const char* timer() const = 0;  // the run's timer, as its JSON names it
  virtual bool on_gpu() const = 0;        // whether the ranks train on GPUs, as the run's JSON says
  // `config` trained on this device's ranks; `placement`, where given, receives where the ranks ran.
  virtual TrainResult train(const TrainConfig& config, const training::DataSet& data, MemoryLedger& ledger,
                            std::string* placement) const = 0;
  // Whether training `result` kept a core for the communication threads; none where communication has streams of
  // its own (a GPU's).
  virtual std::optional<bool> communication_core_set_aside(const TrainResult& result) const = 0;
  // Whether `ranks` ranks here only emulate as many machines (threads of one CPU, or ranks sharing a GPU).
  virtual bool emulated(int ranks) const = 0;
  // What the run did on this device, in the notes beside its numbers: `chosen` trained as `chosen_result`, its ranks
  // placed as `placement` says.
  virtual std::vector<std::string> notes(const TrainConfig& chosen, const TrainResult& chosen_result,
                                         const std::string& placement) const = 0;
};

// The note of every run whose ranks trained on GPUs (in this process or as processes): how their weights compare.
inline constexpr const char* kGpuWeightsNote =
    "weights are compared with single-rank training on the CPU: cuBLAS sums in another order, so they agree to "
    "rounding, never bit for bit";

std::unique_ptr<DdpDevice> make_ddp_device(BackendKind backend);

}  // namespace dlsys::ddp
