#pragma once
// The pipeline executor on GPUs, callable from code that never includes a CUDA header. Without CUDA in the
// build, or where the CUDA library cannot be loaded, each call throws RunFailure saying why. Same contract as
// execute_schedule in executor.h: the same config, the same result, the same schedule, MLP blocks, initial values and
// single-device reference (executor_common.h), so the two executors' numbers compare.
//   placement - with at least p GPUs, pipeline device d runs on GPU d: mode "concurrent", messages are
//               cudaMemcpyPeerAsync between GPUs. With fewer, EMULATED: the p devices are p streams on GPU 0, mode
//               "emulated"; the streams share one GPU's SMs and memory bandwidth, and a message is a copy within it.
//   config.mode - auto: as the placement says; concurrent: only with p GPUs (BadInput otherwise); replayed: every op
//               runs alone and its measured duration is replayed on the schedule, as on the CPU.
//               config.hardware_threads is a CPU notion and is ignored.
#include <string>

#include "engine/ledger.h"
#include "engine/run_control.h"
#include "kernels/pipeline/executor.h"

namespace dlsys::pipeline::cuda {

struct Placement {
  int gpus_visible = 0;
  int gpus_used = 0;      // p, or 1 when emulated
  bool emulated = false;  // several pipeline devices share GPU 0
  std::string description;
};
// Where `devices` pipeline devices run on the GPUs this process sees. Throws RunFailure when no GPU answers.
Placement place_devices(int devices);

// Runs `repeats` (after `warmup_steps`) training steps of the schedule on the GPUs. The single-device reference runs
// on the CPU, its host buffers recorded in `ledger`; device memory is counted in the executor's own ledger
// (peak_activation_bytes). Throws BadInput when mode=concurrent lacks GPUs or the run does not fit in GPU memory,
// RunFailure on any CUDA or cuBLAS error (device memory is freed on every path), Cancelled between steps.
ExecutionResult execute_schedule(const Schedule& schedule, const ExecutorConfig& config, MemoryLedger& ledger,
                                 const RunControl& control);

}  // namespace dlsys::pipeline::cuda
