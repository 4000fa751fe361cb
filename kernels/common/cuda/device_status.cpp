// Inside the CUDA library: asks the runtime whether a device answers and keeps the reason when none does. The
// program reaches this through cuda_status() (engine/cuda_status.cpp), which opens the library first.
#include "kernels/common/cuda/device_status.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <filesystem>
#include <mutex>
#include <optional>

#include "engine/backend.h"
#include "engine/gpu_datasheet.h"

namespace dlsys {

namespace {

// The device's ceilings from NVIDIA's datasheet for its part (engine/gpu_datasheet.h names the documents): matched
// by name and memory, since one model comes as parts with very different figures (H100 PCIe is 51 TFLOP/s and
// 2.0 TB/s, H100 SXM 67 and 3.35). They are published figures, not measurements, and the source says so.
void fill_datasheet_peaks(DeviceInfo& info) {
  const std::optional<GpuDatasheet> sheet = find_gpu_datasheet(info.name, info.memory_total_bytes);
  if (sheet) {
    info.peak_fp32_gflops = sheet->fp32_gflops;
    info.peak_bandwidth_gbps = sheet->bandwidth_gbps;
  }
  info.peaks_source = datasheet_peaks_source(sheet);
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

namespace cuda {

const CudaStatus& device_status() {
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
    info.l2_cache_bytes = static_cast<std::int64_t>(prop.l2CacheSize);
    info.shared_memory_per_sm_bytes = static_cast<std::int64_t>(prop.sharedMemPerMultiprocessor);
    info.memory_bus_bits = prop.memoryBusWidth;
    info.pci_bus_id = fmt::format("{:04x}:{:02x}:{:02x}.0", prop.pciDomainID, prop.pciBusID, prop.pciDeviceID);
    // CUDA 13's cudaDeviceProp no longer carries the memory clock; the attribute does (kHz).
    int memory_clock_khz = 0;
    if (cudaDeviceGetAttribute(&memory_clock_khz, cudaDevAttrMemoryClockRate, 0) == cudaSuccess)
      info.memory_clock_mhz = memory_clock_khz / 1000.0;
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

}  // namespace cuda

}  // namespace dlsys
