// The program's side of these CUDA entry points: each call goes through the CUDA library's table
// (kernels/common/cuda_kernels.h), which throws RunFailure saying why where the library is absent.
#include "kernels/common/cuda_kernels.h"

namespace dlsys::pipeline::cuda {

Placement place_devices(int devices) { return cuda_kernels().pipeline.place_devices(devices); }
ExecutionResult execute_schedule(const Schedule& schedule, const ExecutorConfig& config, MemoryLedger& ledger,
                                 const RunControl& control) {
  return cuda_kernels().pipeline.execute_schedule(schedule, config, ledger, control);
}

}  // namespace dlsys::pipeline::cuda
