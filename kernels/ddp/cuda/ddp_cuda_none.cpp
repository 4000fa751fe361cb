// Built when the CUDA backend is not: the backend is then never chosen, and a direct call says why it cannot run.
#include "engine/backend.h"
#include "engine/errors.h"
#include "kernels/ddp/ddp_cuda.h"

namespace dlsys::ddp::cuda {

collectives::GpuPlacement place_ranks(int) { throw RunFailure(cuda_status().reason); }

GpuTrainResult train_gpu(const TrainConfig&, const training::DataSet&, MemoryLedger&) {
  throw RunFailure(cuda_status().reason);
}

TrainResult train_gpu_process(const TrainConfig&, const training::DataSet&, MemoryLedger&, const ProcessLinks&) {
  throw RunFailure(cuda_status().reason);
}

}  // namespace dlsys::ddp::cuda
