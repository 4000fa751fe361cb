// The program's side of these CUDA entry points: each call goes through the CUDA library's table
// (kernels/common/cuda_kernels.h), which throws RunFailure saying why where the library is absent.
#include "kernels/common/cuda_kernels.h"

namespace dlsys::zero::cuda {

collectives::GpuPlacement place_ranks(int ranks) { return cuda_kernels().zero.place_ranks(ranks); }
GpuZeroTraining train_sharded_gpu(const ZeroConfig& config) { return cuda_kernels().zero.train_sharded_gpu(config); }

}  // namespace dlsys::zero::cuda
