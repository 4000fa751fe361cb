// The hardware lesson's run: STREAM through the roofline lesson's own measurement, then for each working set of the
// sweep a pointer chase and a read stream, on one thread and on all, and the levels named from the staircase.
#include <fmt/format.h>

#include <cmath>

#include "engine/backend.h"
#include "engine/host_buffer.h"
#include "engine/measure.h"
#include "engine/units.h"
#include "kernels/hardware/hardware.h"
#include "kernels/hardware/hardware_math.h"
#include "kernels/hardware/pcie_link.h"
#include "lessons/hardware/hardware_gpu.h"
#include "lessons/hardware/hardware_lesson.h"
#include "lessons/hardware/hardware_levels.h"
#include "lessons/roofline/roofline_measure.h"

namespace dlsys {

using hardware::ChaseLine;
using hardware::HardwareMeasured;
using hardware::HardwareParams;
using hardware::kCacheLineBytes;

namespace {

constexpr double kKiB = 1024;  // the plots' x axis
constexpr std::uint64_t kChaseSeed = 0x5A77010;
// Cycles up to this many lines are walked once after linking to prove they are one cycle (a lap of the largest
// costs a few milliseconds); the tests prove it at every size the shuffle allows.
constexpr std::int64_t kCheckedCycleLines = 1 << 18;

// One working set's four probes.
struct Probe {
  roofline::RooflineRun& run;
  const HardwareParams& p;
  ChaseLine* lines;
  const float* x;
  int wrong = 0;

  MeasureOptions options() const { return {.warmup = 1, .repeats = p.repeats}; }
  void between() const { run.ctx.control.check_cancelled(); }

  // Nanoseconds per dependent load, as a plot point (median, fastest and slowest call).
  SeriesPoint chase_ns(double bytes, int threads) {
    const auto count = static_cast<std::int64_t>(bytes) / kCacheLineBytes;
    hardware::link_random_cycles(lines, count, threads, kChaseSeed);
    for (int t = 0; t < threads; ++t) {
      const std::int64_t begin = count * t / threads, size = count * (t + 1) / threads - begin;
      if (size <= kCheckedCycleLines && hardware::cycle_length(lines + begin, size) != size) ++wrong;
    }
    std::int64_t keep = 0;
    const TimingStats t =
        measure([&] { keep += hardware::chase(lines, count, threads, p.chase_steps); }, options(), [&] { between(); });
    const double steps = double(p.chase_steps);
    if (keep < 0) ++wrong;  // offsets are never negative: the test keeps the walks
    return {bytes / kKiB, t.median_us * 1e3 / steps, t.min_us * 1e3 / steps, t.max_us * 1e3 / steps};
  }

  // GB/s of the read stream; the sum of each call is checked against its closed form (x alternates 0 and 1).
  SeriesPoint read_gbps(double bytes, int threads) {
    const auto n = static_cast<std::int64_t>(bytes) / 4;
    const auto passes = static_cast<std::int64_t>(std::ceil(hardware::kReadBytesPerCall / bytes));
    double sum = 0;
    const CheckedTiming t =
        measure_checked([&] { sum = hardware::read_sum(x, n, passes, threads); },
                        [&] { return std::fabs(sum - double(n / 2)); }, 0.0, options(), [&] { between(); });
    if (t.wrong()) ++wrong;
    const double moved = bytes * double(passes);
    return {bytes / kKiB, moved / (t.time.median_us * 1e3), moved / (t.time.max_us * 1e3),
            moved / (t.time.min_us * 1e3)};
  }
};

// What the CUDA runtime says of GPU 0, read without running anything on it.
hardware::GpuFacts gpu_facts() {
  hardware::GpuFacts g;
  const CudaStatus& status = cuda_status();
  if (!status.available) {
    g.absent_reason = status.plain_reason.empty() ? status.reason : status.plain_reason;
    return g;
  }
  const DeviceInfo& d = status.device;
  g.name = d.name;
  g.sms = d.sm_count;
  g.shared_memory_per_sm_bytes = double(d.shared_memory_per_sm_bytes);
  g.shared_memory_per_block_optin_bytes = double(d.shared_memory_per_block_optin_bytes);
  g.l2_cache_bytes = double(d.l2_cache_bytes);
  g.memory_bus_bits = d.memory_bus_bits;
  g.memory_clock_mhz = d.memory_clock_mhz;
  g.theoretical_gbps = hardware::theoretical_bandwidth_gbps(d.memory_bus_bits, d.memory_clock_mhz);
  g.datasheet_gbps = d.peak_bandwidth_gbps;
  if (d.pci_bus_id.empty()) return g;
  if (const std::optional<hardware::PcieLink> link = hardware::read_pcie_link("/sys/bus/pci/devices/" + d.pci_bus_id)) {
    const double encoded = hardware::pcie_link_gbps(*link);
    g.pcie = hardware::PcieFacts{link->generation, link->lanes, encoded,
                                 encoded * hardware::pcie_payload_efficiency(hardware::kPcieSmallPayloadBytes),
                                 encoded * hardware::pcie_payload_efficiency(hardware::kPcieLargePayloadBytes)};
  }
  return g;
}

Series curve(const char* id, std::string name, const char* y_label, const char* y_unit) {
  return {id, std::move(name), "measured", "working set", "KiB", y_label, y_unit, {}};
}

// The levels named from the staircase, which one served the chosen working set, DRAM's read rate against STREAM, and
// how much of the last-level cache this machine held where main memory's plateau lay inside its reported size.
void name_levels(const hardware::Staircase& stairs, const std::vector<double>& sizes, const HardwareParams& p,
                 HardwareMeasured& m) {
  const hardware::FoundLevels found = hardware::find_levels(hardware::tiers_of(m.caches), stairs);
  m.levels = found.levels;
  m.served_by = found.served_by;
  m.plateaus_in_bands = found.plateaus_in_bands;
  // The sweep's point nearest the chosen working set (by ratio) says which level served it.
  std::size_t nearest = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i)
    if (std::fabs(std::log(sizes[i] / double(p.working_set))) <
        std::fabs(std::log(sizes[nearest] / double(p.working_set))))
      nearest = i;
  m.working_set_bytes = sizes[nearest];
  m.working_set_level = m.served_by[nearest];
  m.working_set_latency_ns = stairs.latency_ns[nearest];
  const hardware::LevelPlateau& dram = m.levels.back();
  m.dram_read_gbps = p.threads > 1 ? dram.read_gbps_all : dram.read_gbps_one;
  m.dram_read_over_stream = m.stream_gbps > 0 ? m.dram_read_gbps / m.stream_gbps : 0;
  m.dram_within_stream = dram.points_inside > 0 && m.dram_read_over_stream <= 1 + hardware::kStreamTolerance;
  if (found.memory_inside_last_cache) m.last_cache_held_bytes = m.levels[m.levels.size() - 2].last_served_bytes;
}

// What qualifies the numbers: whose cache sizes they are, the chase's pages, a sweep that never reached DRAM.
void add_notes(const HardwareMeasured& m, RunResult& result) {
  result.backend.notes.push_back(
      "Cache sizes are the ones the operating system reports; in a virtual machine they are the host's, and other "
      "guests may share the last-level cache and memory.");
  result.backend.notes.push_back(
      m.huge_pages.value
          ? "The chase's lines were offered huge pages (a hint the system may not take): where it took it, a random "
            "load rarely walks the page table."
          : "The chase's lines have the system's default pages: beyond the TLB's reach a load also walks the page "
            "table, which the latency includes.");
  if (m.last_cache_held_bytes) {
    const hardware::LevelPlateau& cache = m.levels[m.levels.size() - 2];
    result.backend.notes.push_back(fmt::format(
        "The latency steps up from {} past {}, inside the {} the system reports for {}: this machine holds far less "
        "of that cache (a virtual machine is told its host's size), so the slower working sets are named DRAM.",
        format_duration_us(cache.latency_ns / 1e3), format_bytes_binary(cache.last_served_bytes),
        format_bytes_binary(cache.capacity_bytes), cache.name));
  } else if (m.levels.back().points_inside == 0) {
    result.backend.notes.push_back(
        "No working set reached four times the last-level cache: raise max_working_set for a DRAM plateau.");
  }
}

}  // namespace

RunResult HardwareLesson::run_with(const HardwareParams& p, RunContext& ctx) const {
  RunResult result = begin_result(*this, ctx);
  const hardware::HardwareTheory theory = theory_of(p);
  const std::vector<double>& sizes = theory.working_sets_bytes;
  const bool all = p.threads > 1;
  const bool on_gpu = ctx.backend == BackendKind::Cuda;
  const double l2_bytes = double(cuda_status().device.l2_cache_bytes);
  static const roofline::RooflineParams kStreamOnly{};
  const double parts = roofline::kStreamProgressParts + 1.0 + double(sizes.size()) +
                       (on_gpu ? hardware::gpu_progress_parts(p, l2_bytes) : 0.0);
  roofline::RooflineRun run{.ctx = ctx,
                            .params = kStreamOnly,
                            .plan = RunPlan(ctx.control, parts),
                            .threads = p.threads,
                            .repeats = p.repeats};
  HardwareMeasured m;
  m.threads = p.threads;
  m.caches = cpu_caches();
  m.gpu = gpu_facts();

  // STREAM first, its arrays freed before the sweep's: the roofline lesson's figure, by the roofline's own code.
  {
    roofline::RooflineMeasured stream;
    roofline::measure_stream(run, p.stream_bytes, stream);
    m.stream_gbps = stream.bandwidth_gbps;
    m.stream_kernel = stream.bandwidth_kernel;
  }

  run.progress("linking the chase's lines and filling the read stream's array");
  const double largest = sizes.back();
  HostBuffer<ChaseLine> lines(ctx.ledger, "chase lines", std::size_t(largest) / kCacheLineBytes);
  HostBuffer<float> x(ctx.ledger, "read array", std::size_t(largest) / 4);
  m.huge_pages = hardware::advise_huge_pages(lines.data(), lines.size_bytes());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = float(i & 1);
  Probe probe{run, p, lines.data(), x.data()};

  Series lat_one = curve("latency_one", "latency, one thread", "latency per load", "ns");
  Series lat_all =
      curve("latency_all", fmt::format("latency, {} threads at once", p.threads), "latency per load", "ns");
  Series bw_one = curve("bandwidth_one", "read bandwidth, one thread", "read bandwidth", "GB/s");
  Series bw_all =
      curve("bandwidth_all", fmt::format("read bandwidth, {} threads", p.threads), "read bandwidth", "GB/s");
  hardware::Staircase stairs;
  for (double bytes : sizes) {
    run.progress(fmt::format("working set {}: chase and read", format_bytes_binary(bytes)));
    lat_one.points.push_back(probe.chase_ns(bytes, 1));
    bw_one.points.push_back(probe.read_gbps(bytes, 1));
    stairs.bytes.push_back(bytes);
    // Levels are named from each working set's fastest call, the one other programs disturbed least.
    stairs.latency_ns.push_back(lat_one.points.back().y_min);
    stairs.read_gbps_one.push_back(bw_one.points.back().y_max);
    if (all) {
      lat_all.points.push_back(probe.chase_ns(bytes, p.threads));
      bw_all.points.push_back(probe.read_gbps(bytes, p.threads));
      stairs.read_gbps_all.push_back(bw_all.points.back().y_max);
    }
  }

  name_levels(stairs, sizes, p, m);
  m.wrong = probe.wrong;
  if (on_gpu) m.gpu_probes = hardware::measure_gpu(run, p, m.gpu, result);

  result.series.push_back(std::move(lat_one));
  result.series.push_back(std::move(bw_one));
  if (all) {
    result.series.push_back(std::move(lat_all));
    result.series.push_back(std::move(bw_all));
  }
  add_notes(m, result);
  result.backend.repeats = p.repeats;
  result.theory = make_values(theory);
  result.measured = make_values(std::move(m));
  run.plan.finish();
  finish_result(result, ctx.ledger);
  return result;
}

}  // namespace dlsys
