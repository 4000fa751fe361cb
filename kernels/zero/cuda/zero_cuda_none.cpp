// Built when the CUDA backend is not: the backend is then never chosen, and a direct call says why it cannot run.
#include "engine/backend.h"
#include "engine/errors.h"
#include "kernels/zero/zero_cuda.h"

namespace dlsys::zero::cuda {

collectives::GpuPlacement place_ranks(int) { throw RunFailure(cuda_status().reason); }

GpuZeroTraining train_sharded_gpu(const ZeroConfig&) { throw RunFailure(cuda_status().reason); }

}  // namespace dlsys::zero::cuda
