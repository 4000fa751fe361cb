// Built with the CUDA backend: asks the runtime whether a device answers and keeps the reason when none does.
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <filesystem>
#include <mutex>

#include "engine/backend.h"

namespace dlsys {

namespace {

// Datasheet FP32 (non-tensor-core) peak and memory bandwidth for the GPUs this course names.
// Sources: NVIDIA A100 datasheet (19.5 TFLOP/s, 1555/2039 GB/s), H100 SXM datasheet (67 TFLOP/s, 3.35 TB/s),
// H200 datasheet (67 TFLOP/s, 4.8 TB/s).
void fill_datasheet_peaks(DeviceInfo& info) {
  const std::string& n = info.name;
  auto has = [&](const char* s) { return n.find(s) != std::string::npos; };
  if (has("H200")) {
    info.peak_fp32_gflops = 67000;
    info.peak_bandwidth_gbps = 4800;
  } else if (has("H100")) {
    info.peak_fp32_gflops = 67000;
    info.peak_bandwidth_gbps = 3350;
  } else if (has("A100") && info.memory_total_bytes > (50ll << 30)) {
    info.peak_fp32_gflops = 19500;
    info.peak_bandwidth_gbps = 2039;
  } else if (has("A100")) {
    info.peak_fp32_gflops = 19500;
    info.peak_bandwidth_gbps = 1555;
  }
  info.peaks_source = info.peak_fp32_gflops > 0 ? "datasheet (NVIDIA)" : "unknown device: no datasheet peaks";
}

// The runtime answers "insufficient driver" both when the driver is too old and when there is none at all; the
// kernel module's version file tells the two apart.
std::string plain_reason(cudaError_t err) {
  if (err == cudaErrorInsufficientDriver)
    return std::filesystem::exists("/proc/driver/nvidia/version") ? "the NVIDIA driver is too old for this CUDA build"
                                                                  : "no NVIDIA driver is installed";
  if (err == cudaErrorNoDevice) return "no NVIDIA GPU was found";
  return "the CUDA runtime could not start";  // the runtime's own words stay in `reason`
}

}  // namespace

const CudaStatus& cuda_status() {
  static std::once_flag once;
  static CudaStatus status;
  std::call_once(once, [] {
    status.compiled = true;
    int count = 0;  // left untouched by the runtime when no driver is present
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
      status.reason = fmt::format("cudaGetDeviceCount failed: {} ({})", cudaGetErrorString(err), static_cast<int>(err));
      status.plain_reason = plain_reason(err);
      return;
    }
    if (count <= 0) {
      status.reason = "the CUDA runtime reports no devices";
      status.plain_reason = "no NVIDIA GPU was found";
      return;
    }
    cudaDeviceProp prop{};
    if (const cudaError_t e = cudaGetDeviceProperties(&prop, 0); e != cudaSuccess) {
      status.reason = fmt::format("cudaGetDeviceProperties failed: {}", cudaGetErrorString(e));
      status.plain_reason = plain_reason(e);
      return;
    }
    std::size_t free_bytes = 0, total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    DeviceInfo& info = status.device;
    info.kind = BackendKind::Cuda;
    info.name = prop.name;
    info.sm_count = prop.multiProcessorCount;
    info.threads = prop.multiProcessorCount;
    info.compute_capability = prop.major * 10 + prop.minor;
    info.shared_memory_per_block_optin_bytes = static_cast<std::int64_t>(prop.sharedMemPerBlockOptin);
    info.memory_total_bytes = static_cast<std::int64_t>(total_bytes);
    info.memory_free_bytes = static_cast<std::int64_t>(free_bytes);
    int runtime_version = 0;
    cudaRuntimeGetVersion(&runtime_version);
    info.library = fmt::format("CUDA runtime {}.{}, cuBLAS", runtime_version / 1000, (runtime_version % 1000) / 10);
    fill_datasheet_peaks(info);
    status.device_count = count;
    status.available = true;
  });
  return status;
}

}  // namespace dlsys
