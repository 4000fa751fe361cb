#include "engine/backend.h"

#include <fmt/format.h>

#include <cmath>

#include "engine/errors.h"
#include "engine/json_io.h"

namespace dlsys {

BackendKind resolve_backend(const std::string& requested) {
  const CudaStatus& cuda = cuda_status();
  if (requested == "cpu") return BackendKind::Cpu;
  if (requested == "auto") return cuda.available ? BackendKind::Cuda : BackendKind::Cpu;
  if (requested == "cuda") {
    if (cuda.available) return BackendKind::Cuda;
    throw BadInput(fmt::format("backend 'cuda' is not available here ({}); allowed: auto, cpu", cuda.reason));
  }
  throw BadInput(fmt::format("backend '{}' is unknown; allowed: auto, cpu, cuda", clip_for_message(requested)));
}

std::string backend_summary(BackendKind kind) {
  if (kind == BackendKind::Cuda) {
    const DeviceInfo& gpu = cuda_status().device;
    return fmt::format("CUDA - {} - {:.0f} GB", gpu.name, std::round(gpu.memory_total_bytes / 1e9));
  }
  const DeviceInfo cpu = describe_cpu();
  return fmt::format("CPU - {} threads - OpenBLAS", cpu.threads);
}

}  // namespace dlsys
