// The program's side of these CUDA entry points: each call goes through the CUDA library's table
// (kernels/common/cuda_kernels.h), which throws RunFailure saying why where the library is absent.
#include "kernels/common/cuda_kernels.h"

namespace dlsys::ddp::cuda {

collectives::GpuPlacement place_ranks(int ranks) { return cuda_kernels().ddp.place_ranks(ranks); }
GpuTrainResult train_gpu(const TrainConfig& config, const training::DataSet& data, MemoryLedger& ledger) {
  return cuda_kernels().ddp.train_gpu(config, data, ledger);
}
TrainResult train_gpu_process(const TrainConfig& config, const training::DataSet& data, MemoryLedger& ledger,
                              const ProcessLinks& links) {
  return cuda_kernels().ddp.train_gpu_process(config, data, ledger, links);
}

}  // namespace dlsys::ddp::cuda
