#pragma once
// The pipeline executor on the backend a run chose: CPU threads (executor.h) or GPUs (executor_cuda.h), with the
// same contract. Callers need not know whether this build has CUDA: without it (or without its library) the GPU
// side throws RunFailure saying why, and the CUDA backend is never chosen.
#include "engine/backend.h"
#include "kernels/pipeline/executor.h"

namespace dlsys::pipeline {

ExecutionResult execute_on(BackendKind backend, const Schedule& schedule, const ExecutorConfig& config,
                           MemoryLedger& ledger, const RunControl& control);

}  // namespace dlsys::pipeline
