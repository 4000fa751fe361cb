#pragma once
// For the CUDA tests: how many GPUs this process sees (0 when the driver does not answer).
#include <cuda_runtime.h>

namespace dlsys::testing {

inline int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return 0;
  return count;
}

}  // namespace dlsys::testing
