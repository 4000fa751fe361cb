// Built when the CUDA backend is not compiled in: the status says so.
#include "engine/backend.h"

namespace dlsys {

const CudaStatus& cuda_status() {
  // Two causes lead here; naming the right one saves looking for a missing nvcc that was never asked for.
#if DLSYS_CUDA_TURNED_OFF
  constexpr const char* reason = "this build has no CUDA backend (configured with -DDLSYS_WITH_CUDA=OFF)";
#else
  constexpr const char* reason = "this build has no CUDA backend (nvcc was not found at configure time)";
#endif
  static const CudaStatus status{.compiled = false,
                                 .available = false,
                                 .device_count = 0,
                                 .reason = reason,
                                 .plain_reason = "this build has no CUDA backend"};
  return status;
}

}  // namespace dlsys
