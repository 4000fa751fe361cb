// Built when the CUDA backend is not compiled in: the status says so.
#include "engine/backend.h"

namespace dlsys {

const CudaStatus& cuda_status() {
  static const CudaStatus status{.compiled = false, .available = false, .device_count = 0,
                                 .reason = "this build has no CUDA backend (nvcc was not found at configure time)",
                                 .plain_reason = "this build has no CUDA backend"};
  return status;
}

}  // namespace dlsys
