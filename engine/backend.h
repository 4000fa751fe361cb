#pragma once
// Backends: the CPU always; CUDA when compiled in AND a device answers. Each reports its device and its ceilings.
#include <cstdint>
#include <optional>
#include <string>

namespace dlsys {

enum class BackendKind { Cpu, Cuda };
std::string backend_name(BackendKind kind);  // "cpu" / "cuda"

struct DeviceInfo {
  BackendKind kind = BackendKind::Cpu;
  std::string name;     // "AMD EPYC 7B13" / "NVIDIA H100 80GB HBM3"
  int threads = 0;      // CPU hardware threads, or SM count on a GPU
  std::string library;  // "OpenBLAS 0.3.21" / "cuBLAS 13.0"
  std::int64_t memory_total_bytes = 0;
  std::int64_t memory_free_bytes = 0;
  int sm_count = 0;
  int compute_capability = 0;                            // 90 for sm_90
  std::int64_t shared_memory_per_block_optin_bytes = 0;  // on a GPU: the most one block may ask for
  std::int64_t l2_cache_bytes = 0;                       // on a GPU: its L2 cache (0 when unknown)
  std::int64_t shared_memory_per_sm_bytes = 0;           // on a GPU: shared memory one SM has (0 when unknown)
  int memory_bus_bits = 0;                               // on a GPU: width of its memory interface (0 when unknown)
  double memory_clock_mhz = 0;  // on a GPU: its memory clock, two transfers per clock (0 when unknown)
  std::string pci_bus_id;       // on a GPU: its PCI address as Linux names it, "0000:1b:00.0" ("" when unknown)
  // Ceilings: measured by a probe on the CPU, datasheet values on known GPUs (0 when unknown).
  double peak_fp32_gflops = 0;
  double peak_bandwidth_gbps = 0;
  std::string peaks_source;  // e.g. "measured: OpenBLAS sgemm 1536^3, memcpy 64 MiB"
  // A datasheet-style figure to judge the measured peak by: threads x fp32 lanes x FMA units x 2 FLOP x clock on a
  // CPU (0 when unknown), and how it was made.
  double nominal_fp32_gflops = 0;
  std::string nominal_source;
};

// The CPU as this process sees it: name, threads, memory. Cheap (reads /proc).
DeviceInfo describe_cpu();
// The CPU's ceilings: peak FP32 GFLOP/s (OpenBLAS sgemm) and copy bandwidth GB/s, each the best of this session's
// probe and every earlier one on this machine (engine/best_ceilings.h), with the nominal FP32 figure beside them.
// Probed once per process on first call (about half a second), then cached. Thread-safe.
const DeviceInfo& cpu_with_peaks();
// Bytes copied per second by `threads` threads doing memcpy on buffers far larger than the caches (GB/s, 1e9).
double measure_copy_bandwidth_gbps(int threads, std::int64_t bytes_per_thread = 64ll << 20);

struct CudaStatus {
  bool compiled = false;   // built with the CUDA backend
  bool available = false;  // compiled and a device answered
  int device_count = 0;
  std::string reason;        // why not available, in the runtime's words (the CUDA error string and code)
  std::string plain_reason;  // the same in a reader's words: "no NVIDIA driver is installed"
  DeviceInfo device;         // device 0, when available
};
// Asked once per process, then cached.
const CudaStatus& cuda_status();

// Picks the backend for "auto", "cpu" or "cuda". Throws BadInput when the request cannot be met, with the reason.
BackendKind resolve_backend(const std::string& requested);

// One line for the status bar: "CPU - 2 threads - OpenBLAS" or "CUDA - NVIDIA H100 80GB HBM3 - 80 GB".
std::string backend_summary(BackendKind kind);

}  // namespace dlsys
