#include "engine/backend.h"

#include <fmt/format.h>

#include <cmath>

#include "engine/errors.h"
#include "engine/json_io.h"

namespace dlsys {

BackendKind resolve_backend(const std::string& requested) {
  // "cpu" never asks about CUDA: asking opens the CUDA library (engine/cuda_plugin.h), which a CPU run does not need.
  if (requested == "cpu") return BackendKind::Cpu;
  if (requested == "auto") return cuda_status().available ? BackendKind::Cuda : BackendKind::Cpu;
  if (requested == "cuda") {
    const CudaStatus& cuda = cuda_status();
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
