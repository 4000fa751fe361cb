// Built when the CUDA backend is not: the backend is then never chosen, and a direct call says why it cannot run.
#include "engine/backend.h"
#include "engine/errors.h"
#include "kernels/pipeline/executor_cuda.h"

namespace dlsys::pipeline::cuda {

Placement place_devices(int) { throw RunFailure(cuda_status().reason); }

ExecutionResult execute_schedule(const Schedule&, const ExecutorConfig&, MemoryLedger&, const RunControl&) {
  throw RunFailure(cuda_status().reason);
}

}  // namespace dlsys::pipeline::cuda
