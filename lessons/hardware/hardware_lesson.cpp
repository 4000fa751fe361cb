#include "lessons/hardware/hardware_lesson.h"

#include <fmt/format.h>

#include <cmath>

#include "engine/units.h"
#include "kernels/hardware/hardware.h"
#include "kernels/hardware/hardware_math.h"
#include "lessons/common/cpu_threads_param.h"
#include "lessons/common/repeats_param.h"
#include "lessons/common/run_time_limit.h"
#include "lessons/hardware/hardware_gpu.h"

namespace dlsys {

using hardware::HardwareParams;
using hardware::HardwareTheory;

namespace {
constexpr double kMiB = 1024.0 * 1024;
constexpr double kGiB = 1024 * kMiB;
}  // namespace

std::vector<ParamSpec> HardwareLesson::params() const {
  return {
      {.key = "min_working_set",
       .label = "smallest working set",
       .type = ParamType::Bytes,
       .default_text = "4KiB",
       .min = 4096,
       .max = kGiB,
       .help = "the sweep starts here (a multiple of 64 B lines)"},
      {.key = "max_working_set",
       .label = "largest working set",
       .type = ParamType::Bytes,
       .default_text = "256MiB",
       .min = 8192,
       .max = 2 * kGiB,
       .help = "the sweep ends here: beyond the last-level cache for a DRAM plateau (4x it or more)"},
      {.key = "points_per_octave",
       .label = "working sets per doubling",
       .type = ParamType::Integer,
       .default_text = "2",
       .min = 1,
       .max = 4},
      {.key = "chase_steps",
       .label = "chase steps per call",
       .type = ParamType::Integer,
       .default_text = "1048576",
       .min = 1024,
       .max = 1 << 28,
       .help = "dependent loads per timed call of the pointer chase"},
      {.key = "working_set",
       .label = "working set to place",
       .type = ParamType::Bytes,
       .default_text = "512KiB",
       .min = 4096,
       .max = 2 * kGiB,
       .help = "the staircase step marks it and names the level that serves it"},
      {.key = "stream_bytes",
       .label = "STREAM array size",
       .type = ParamType::Bytes,
       .default_text = "128MiB",
       .min = 4 * kMiB,
       .max = 2 * kGiB,
       .help = "each of STREAM's three arrays: the roofline lesson's bandwidth, measured here to compare with"},
      repeats_param("timed calls per working set and probe, after one warm-up"),
      cpu_threads_param("for the all-threads curves and STREAM"),
      max_minutes_param(),
  };
}

HardwareParams HardwareLesson::read_params(const ParamValues& values) const {
  return {.min_bytes = values.integer("min_working_set"),
          .max_bytes = values.integer("max_working_set"),
          .points_per_octave = static_cast<int>(values.integer("points_per_octave")),
          .chase_steps = values.integer("chase_steps"),
          .working_set = values.integer("working_set"),
          .stream_bytes = values.integer("stream_bytes"),
          .threads = static_cast<int>(values.integer("threads")),
          .repeats = static_cast<int>(values.integer("repeats")),
          .max_minutes = values.real("max_minutes")};
}

namespace hardware {

std::vector<double> working_sets(std::int64_t min_bytes, std::int64_t max_bytes, int points_per_octave) {
  std::vector<double> sizes;
  const double line = double(kCacheLineBytes);
  for (int i = 0;; ++i) {
    // Whole lines, so the chase's cycle covers exactly the working set.
    const double bytes = std::round(double(min_bytes) * std::exp2(double(i) / points_per_octave) / line) * line;
    if (bytes >= double(max_bytes)) break;
    if (sizes.empty() || bytes > sizes.back()) sizes.push_back(bytes);
  }
  sizes.push_back(std::floor(double(max_bytes) / line) * line);
  return sizes;
}

}  // namespace hardware

HardwareTheory HardwareLesson::theory_of(const HardwareParams& p) const {
  using namespace hardware;
  HardwareTheory t;
  t.working_sets_bytes = working_sets(p.min_bytes, p.max_bytes, p.points_per_octave);
  t.a100_40gb_hbm_gbps = theoretical_bandwidth_gbps(kA100MemoryBusBits, kA100_40GbMemoryClockMhz);
  t.h100_sxm_hbm_gbps = theoretical_bandwidth_gbps(kH100SxmMemoryBusBits, kH100SxmMemoryClockMhz);
  t.a100_smem_gbps_per_sm = shared_memory_gbps_per_sm(kA100SmClockMhz);
  t.a100_smem_gbps_aggregate = shared_memory_gbps_aggregate(kA100SmClockMhz, kA100Sms);
  t.h100_smem_gbps_per_sm = shared_memory_gbps_per_sm(kH100SxmSmClockMhz);
  t.h100_smem_gbps_aggregate = shared_memory_gbps_aggregate(kH100SxmSmClockMhz, kH100SxmSms);
  t.a100_smem_over_hbm = t.a100_smem_gbps_aggregate / t.a100_40gb_hbm_gbps;
  t.h100_smem_over_hbm = t.h100_smem_gbps_aggregate / t.h100_sxm_hbm_gbps;
  t.course_nvlink_pcie_ratio = course_nvlink_over_pcie();
  t.nvlink_pcie_gen4_ratio = nvlink5_over_pcie_gen4();
  t.nvlink_pcie_gen5_ratio = nvlink5_over_pcie_gen5();
  t.nvlink_infiniband_ratio = nvlink4_over_infiniband_per_gpu();
  t.course_nvlink_infiniband_ratio = course_nvlink_over_infiniband_node();
  return t;
}

void HardwareLesson::check_params(const HardwareParams& p, BackendKind) const {
  if (p.min_bytes >= p.max_bytes)
    throw BadInput(
        fmt::format("parameters 'min_working_set' and 'max_working_set': the sweep needs min below max, got {} and {}",
                    format_bytes_binary(double(p.min_bytes)), format_bytes_binary(double(p.max_bytes))));
  // Each thread chases a cycle of its own part of the working set: every part needs a line at least.
  const double least_bytes = double(p.threads) * double(hardware::kCacheLineBytes);
  if (double(p.min_bytes) < least_bytes)
    throw BadInput(fmt::format(
        "parameters 'threads' and 'min_working_set': {} threads each chase their own part of the working set, so it "
        "needs at least {} (one 64 B line per thread), got {}; raise min_working_set or lower threads",
        p.threads, format_bytes_binary(least_bytes), format_bytes_binary(double(p.min_bytes))));
}

// Seconds per step and bytes per second, on the slow side of a desktop core, for the estimate only.
namespace {
constexpr double kChaseSecondsPerStepFar = 150e-9, kChaseSecondsPerStepNear = 5e-9;
constexpr double kReadBytesPerSecond = 5e9, kShuffleSecondsPerLine = 60e-9;
}  // namespace

RunBudget HardwareLesson::budget_of(const HardwareParams& p, BackendKind backend) const {
  const std::vector<double> sizes = hardware::working_sets(p.min_bytes, p.max_bytes, p.points_per_octave);
  const double calls = 1.0 + p.repeats, curves = p.threads > 1 ? 2.0 : 1.0;
  double seconds = 0;
  for (double bytes : sizes) {
    const double per_step = bytes > 8 * kMiB ? kChaseSecondsPerStepFar : kChaseSecondsPerStepNear;
    seconds += curves * calls * double(p.chase_steps) * per_step;
    seconds += curves * calls * std::max(bytes, hardware::kReadBytesPerCall) / kReadBytesPerSecond;
    seconds += curves * bytes / double(hardware::kCacheLineBytes) * kShuffleSecondsPerLine;
  }
  seconds += 2 * 4 * 9 * 3 * double(p.stream_bytes) / kReadBytesPerSecond;  // two STREAM passes of 4 kernels
  RunBudget budget;
  // The chase's lines and its shuffle's indices, the read stream's array, and STREAM's three arrays (one at a time).
  budget.host_bytes = std::max(double(p.max_bytes) * (2 + 1.0 / 16), 3.0 * double(p.stream_bytes));
  budget.cpu_seconds = seconds;
  if (backend == BackendKind::Cuda) {
    const hardware::GpuBytes gpu = hardware::gpu_bytes(p, double(cuda_status().device.l2_cache_bytes));
    budget.device_bytes = gpu.device;
    budget.host_bytes += gpu.host;
  }
  budget.max_minutes = p.max_minutes;
  budget.sizes = "parameters 'max_working_set' and 'stream_bytes'";
  budget.cpu_work = fmt::format("{} working sets: chase steps at 5-150 ns, reads and STREAM at 5 GB/s", sizes.size());
  budget.smaller = "max_working_set, points_per_octave, chase_steps, repeats or stream_bytes";
  return budget;
}

std::shared_ptr<const hardware::HardwareSteps> HardwareLesson::step_data_of(const HardwareParams& p) const {
  return hardware::make_steps(p, theory_of(p));
}

}  // namespace dlsys
