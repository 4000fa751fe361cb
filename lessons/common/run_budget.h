#pragma once
// What a run needs of this machine, declared by the lesson, and the one function that refuses a run that does not fit
// before anything is allocated: host memory, GPU memory and CPU time, each against one headroom.
#include <string>

#include "engine/backend.h"

namespace dlsys {

// A CUDA run may use at most this share of GPU 0's memory free when it starts. The free count is read before the run
// creates its CUDA context, loads its kernels and lets cuBLAS or NCCL allocate their workspaces (a few hundred MiB
// together), and the caching allocator rounds every block up; 10 % keeps those out of the run's own arrays on a
// 24 GiB card and is a few GiB on an 80 GiB one. (The host's share, kHostMemoryHeadroom in engine/host_memory.h, is
// smaller because the operating system and other programs share that memory.)
inline constexpr double kDeviceMemoryHeadroom = 0.9;
// What a budget counts for each cuBLAS handle a run creates: the handle and its workspace.
inline constexpr double kCublasHandleBytes = 64.0 * (1 << 20);

struct DeviceMemory {
  double free_bytes = 0;  // GPU 0's free memory when asked; 0 without a GPU
  double budget_bytes() const { return kDeviceMemoryHeadroom * free_bytes; }
  bool fits(double bytes) const { return bytes <= budget_bytes(); }
};

// GPU 0's free memory now.
DeviceMemory device_memory();

struct RunBudget {
  double host_bytes = 0;    // held at once at the run's largest stage
  double device_bytes = 0;  // on GPU 0, when the run is on CUDA
  double cpu_seconds = 0;   // estimated from the work and the rates of run_time_limit.h
  double max_minutes = 0;   // the run's limit (the max_minutes parameter); 0 = no time check
  // For the messages: the parameters that set the bytes ("parameter 'bytes' (or gemm_n, attention_n)"), what the
  // time estimate counted, and the parameters that shrink the run ("k, bytes or gemm_n").
  std::string sizes;
  std::string cpu_work;
  std::string smaller;
};

// Throws BadInput naming the parameters and what is allowed when the run needs more GPU memory (CUDA runs only), more
// host memory, or more time than the budget allows; device first, since a GPU run's host copies are the same size.
void refuse_what_does_not_fit(const RunBudget& budget, BackendKind backend);

}  // namespace dlsys
