#pragma once
// The CUDA backend is a library of its own, libdlsys_cuda.so, opened the first time something asks for CUDA
// (cuda_status() included). A program that never uses the GPU never maps the CUDA runtime, cuBLAS or NCCL, which
// reserve gigabytes of address space between them: the CPU lessons then run under a tight `ulimit -v`.
#include "engine/backend.h"

namespace dlsys {

struct CudaKernels;  // every operation's CUDA entry points (kernels/common/cuda_kernels.h)

// What the library's one exported function, dlsys_cuda_plugin(), returns.
struct CudaPlugin {
  int interface_version = 0;               // kCudaPluginInterfaceVersion of the build that made the library
  CudaStatus (*probe_status)() = nullptr;  // asks the runtime whether a device answers
  const CudaKernels* kernels = nullptr;
};
// Raised whenever CudaPlugin or CudaKernels changes shape, so a library left over from another build is refused
// with a reason instead of being called through the wrong table.
inline constexpr int kCudaPluginInterfaceVersion = 7;
inline constexpr const char* kCudaPluginFileName = "libdlsys_cuda.so";
// Overrides where the library is looked for (a path to the file): for tests, and for layouts the search misses.
inline constexpr const char* kCudaPluginPathVariable = "DLSYS_CUDA_PLUGIN";

// The library, opened once per process on first call (thread-safe) and never closed. Null when the build has no
// CUDA backend or the library could not be opened; cuda_status().reason then says why.
const CudaPlugin* cuda_plugin();

}  // namespace dlsys

extern "C" const dlsys::CudaPlugin* dlsys_cuda_plugin();
