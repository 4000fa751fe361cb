#include <cblas.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/backend.h"
#include "engine/measure.h"
#include "engine/parallel.h"

namespace dlsys {

namespace {

std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown CPU";
}

std::int64_t meminfo_bytes(const char* field) {
  std::ifstream meminfo("/proc/meminfo");
  std::string name;
  std::int64_t kib = 0;
  std::string unit;
  while (meminfo >> name >> kib >> unit)
    if (name == field) return kib * 1024;
  return 0;
}

// OpenBLAS reaches its plateau well before 1536^3 on a few cores; a larger probe only costs start-up time.
double measure_sgemm_peak_gflops() {
  const int n = 1536;
  std::vector<float> a(static_cast<std::size_t>(n) * n, 1.0f), b(a.size(), 0.5f), c(a.size(), 0.0f);
  const auto stats = measure(
      [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(),
                    n);
      },
      MeasureOptions{.warmup = 1, .repeats = 3});
  return 2.0 * n * n * n / (stats.min_us * 1e3);
}

}  // namespace

std::string backend_name(BackendKind kind) { return kind == BackendKind::Cpu ? "cpu" : "cuda"; }

DeviceInfo describe_cpu() {
  DeviceInfo info;
  info.kind = BackendKind::Cpu;
  info.name = cpu_model_name();
  info.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  info.library = fmt::format("OpenBLAS ({})", openblas_get_config());
  info.memory_total_bytes = meminfo_bytes("MemTotal:");
  info.memory_free_bytes = meminfo_bytes("MemAvailable:");
  return info;
}

double measure_copy_bandwidth_gbps(int threads, std::int64_t bytes_per_thread) {
  std::vector<std::vector<char>> sources(threads), targets(threads);
  parallel_for(threads, threads, [&](std::int64_t begin, std::int64_t end) {
    for (auto t = begin; t < end; ++t) {
      sources[t].assign(bytes_per_thread, 1);  // touch every page before timing
      targets[t].assign(bytes_per_thread, 0);
    }
  });
  const auto stats = measure(
      [&] {
        parallel_for(threads, threads, [&](std::int64_t begin, std::int64_t end) {
          for (auto t = begin; t < end; ++t) std::memcpy(targets[t].data(), sources[t].data(), bytes_per_thread);
        });
      },
      MeasureOptions{.warmup = 1, .repeats = 5});
  return static_cast<double>(bytes_per_thread) * threads / (stats.min_us * 1e3);
}

const DeviceInfo& cpu_with_peaks() {
  static std::once_flag once;
  static DeviceInfo info;
  std::call_once(once, [] {
    info = describe_cpu();
    info.peak_fp32_gflops = measure_sgemm_peak_gflops();
    info.peak_bandwidth_gbps = measure_copy_bandwidth_gbps(info.threads);
    info.peaks_source =
        fmt::format("measured: OpenBLAS sgemm 1536^3 on {} threads; memcpy of 64 MiB per thread", info.threads);
  });
  return info;
}

}  // namespace dlsys
