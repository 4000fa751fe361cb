#include <cblas.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "engine/address_space.h"
#include "engine/backend.h"
#include "engine/best_ceilings.h"
#include "engine/cpu_flops_per_cycle.h"
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
  reserve_openblas_buffers("measuring the CPU's sgemm peak");
  require_address_space(3.0 * n * n * 4, 0, "measuring the CPU's sgemm peak");
  std::vector<float> a(static_cast<std::size_t>(n) * n, 1.0f), b(a.size(), 0.5f), c(a.size(), 0.0f);
  const auto stats = measure(
      [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(),
                    n);
      },
      MeasureOptions{.warmup = 1, .repeats = 3});
  return 2.0 * n * n * n / (stats.min_us * 1e3);
}

// The first value of a /proc/cpuinfo field ("cpu MHz", "flags"), or "".
std::string cpuinfo_field(const char* field) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind(field, 0) == 0) {
      const auto colon = line.find(':');
      return colon == std::string::npos ? "" : line.substr(std::min(line.size(), colon + 2));
    }
  return "";
}

// Physical cores: distinct (physical id, core id) pairs; two hardware threads of one core share its FMA units.
int physical_cores(int threads) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, package;
  std::set<std::string> cores;
  while (std::getline(cpuinfo, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string value = line.substr(std::min(line.size(), colon + 2));
    if (line.rfind("physical id", 0) == 0) package = value;
    if (line.rfind("core id", 0) == 0) cores.insert(package + "/" + value);
  }
  return cores.empty() ? threads : int(cores.size());
}

// Cores x FP32 FLOP per core per cycle (by microarchitecture) x the clock /proc/cpuinfo reports. Nominal only: that
// clock is usually the base clock, and boost clocks run above it.
void fill_nominal_peak(DeviceInfo& info) {
  const std::string flags = " " + cpuinfo_field("flags") + " ";
  CpuIdentity cpu{.vendor = cpuinfo_field("vendor_id"),
                  .family = std::atoi(cpuinfo_field("cpu family").c_str()),
                  .model = std::atoi(cpuinfo_field("model\t").c_str()),
                  .fma = flags.find(" fma ") != std::string::npos,
                  .avx512f = flags.find(" avx512f ") != std::string::npos};
  const CoreFlopsPerCycle per_core = fp32_flops_per_cycle(cpu);
  const double mhz = std::atof(cpuinfo_field("cpu MHz").c_str());
  if (per_core.fp32_flop == 0 || mhz <= 0) return;
  const int cores = physical_cores(info.threads);
  info.nominal_fp32_gflops = cores * per_core.fp32_flop * mhz / 1e3;
  info.nominal_source = fmt::format(
      "{}{} core{} x {} FP32 FLOP per cycle ({}) x {:.2f} GHz, the clock /proc/cpuinfo reports (boost "
      "clocks run higher)",
      per_core.upper_bound ? "upper bound: " : "", cores, cores == 1 ? "" : "s", per_core.fp32_flop, per_core.why,
      mhz / 1e3);
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
    const std::string machine = fmt::format("{}, {} threads, {}", info.name, info.threads, info.library);
    const BestCeiling flops = best_ceiling(machine + ": sgemm GFLOP/s", measure_sgemm_peak_gflops());
    const BestCeiling copy = best_ceiling(machine + ": memcpy GB/s", measure_copy_bandwidth_gbps(info.threads));
    info.peak_fp32_gflops = flops.best;
    info.peak_bandwidth_gbps = copy.best;
    info.peaks_source = fmt::format(
        "measured: OpenBLAS sgemm 1536^3 on {} threads ({:.0f} GFLOP/s this session), memcpy of 64 MiB per thread "
        "({:.1f} GB/s this session); the best of every session on this machine",
        info.threads, flops.measured, copy.measured);
    fill_nominal_peak(info);
  });
  return info;
}

}  // namespace dlsys
