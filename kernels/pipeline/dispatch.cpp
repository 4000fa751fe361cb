#include "kernels/pipeline/backends.h"
#include "kernels/pipeline/executor_cuda.h"

namespace dlsys::pipeline {

ExecutionResult execute_on(BackendKind backend, const Schedule& schedule, const ExecutorConfig& config,
                           MemoryLedger& ledger, const RunControl& control) {
  if (backend == BackendKind::Cuda) return cuda::execute_schedule(schedule, config, ledger, control);
  return execute_schedule(schedule, config, ledger, control);
}

}  // namespace dlsys::pipeline
