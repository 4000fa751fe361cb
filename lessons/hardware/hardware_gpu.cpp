// The hardware lesson's GPU half (hardware_gpu.h): each probe checked against what it must compute before its time is
// kept (the chase's last line walked again on the CPU, the read stream's and shared memory's sums in closed form, the
// copies compared byte for byte).
#include "lessons/hardware/hardware_gpu.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/units.h"
#include "kernels/common/device_buffer.h"
#include "kernels/hardware/hardware.h"
#include "kernels/hardware/hardware_cuda.h"
#include "kernels/hardware/hardware_math.h"
#include "lessons/hardware/hardware_lesson.h"
#include "lessons/hardware/hardware_levels.h"

namespace dlsys::hardware {

namespace {

constexpr double kKiB = 1024;
constexpr std::uint64_t kGpuChaseSeed = 0x6A77020;
// Dependent loads per timed chase: 65,536 at an HBM latency of about 0.7 us is 46 ms, and at L1's 30 ns still 2 ms,
// a thousand times a launch.
constexpr std::int64_t kGpuChaseSteps = 1 << 16;
// Bytes each timed call of the read stream reads: a millisecond at HBM's rate, so a launch is lost in it.
constexpr double kGpuReadBytesPerCall = 4.0 * 1024 * 1024 * 1024;
// Iterations of the shared-memory kernel: each thread sums 4 x 8 x this many ones, exact in fp32 (below 2^24).
constexpr std::int64_t kSharedIterations = 1 << 16;
// The copies: from 64 KiB (where a call's fixed cost shows) to 256 MiB, two per doubling.
constexpr double kCopyFromBytes = 64 * kKiB, kCopyToBytes = 256 * kKiB * kKiB;

double gpu_max_bytes(const HardwareParams& p, double l2_bytes) {
  const double line = double(cuda::kGpuLineBytes);
  return std::max(double(p.max_bytes), std::ceil(4 * l2_bytes / line) * line);
}

std::vector<double> copy_sizes() {
  std::vector<double> sizes;
  for (double b = kCopyFromBytes; b <= kCopyToBytes; b *= 2) sizes.push_back(b);
  return sizes;
}

Series curve(const char* id, std::string name, const char* x_label, const char* y_label, const char* y_unit) {
  return {id, std::move(name), "measured", x_label, "KiB", y_label, y_unit, {}};
}

// The median over the points inside [from, to] of each point's fastest value.
GpuLevel level(const char* name, const Series& latency, const Series& read, double from_bytes, double to_bytes) {
  GpuLevel l{name};
  std::vector<double> ns, gbps;
  for (std::size_t i = 0; i < latency.points.size(); ++i) {
    const double bytes = latency.points[i].x * kKiB;
    if (bytes < from_bytes || bytes > to_bytes) continue;
    ns.push_back(latency.points[i].y_min);
    gbps.push_back(read.points[i].y_max);
  }
  l.points_inside = int(ns.size());
  l.latency_ns = median_of(ns);
  l.read_gbps = median_of(gbps);
  return l;
}

struct GpuProbe {
  roofline::RooflineRun& run;
  const HardwareParams& p;
  dlsys::cuda::DeviceBuffer<std::uint32_t>& lines;
  std::vector<std::uint32_t>& staged;  // the lines as uploaded: only each line's first word is used
  const float* x;
  int wrong = 0;

  MeasureOptions options() const { return {.warmup = 1, .repeats = p.repeats}; }
  void between() const { run.ctx.control.check_cancelled(); }

  // The cycle is walked whole once first, so that every level that can hold it does; the timed calls then walk on from
  // where the last one stopped. (Timed calls that each started from line 0 walked the same 8 MiB of lines again and
  // found them in the L2, so working sets four times its size read as fast as the L2.)
  SeriesPoint chase_ns(double bytes) {
    const auto count = static_cast<std::int64_t>(bytes) / cuda::kGpuLineBytes;
    const std::vector<std::uint32_t> successor = random_cycle_successors(count, kGpuChaseSeed);
    for (std::int64_t i = 0; i < count; ++i) staged[std::size_t(i * cuda::kGpuLineWords)] = successor[std::size_t(i)];
    dlsys::cuda::copy_to_device(lines.get(), staged.data(), count * cuda::kGpuLineBytes);
    dlsys::cuda::DeviceBuffer<std::uint32_t> at(1);
    const std::uint32_t first_line = 0;
    at.upload(&first_line);
    cuda::chase(at.get(), lines.get(), count);  // back at line 0, every line touched once
    const std::uint32_t expected = line_after(successor, first_line, kGpuChaseSteps);
    const CheckedTiming t = measure_checked([&] { cuda::chase(at.get(), lines.get(), kGpuChaseSteps); },
                                            [&] {
                                              std::uint32_t got = 0;
                                              dlsys::cuda::copy_to_host_bytes(&got, at.get(), sizeof got);
                                              return got == expected ? 0.0 : 1.0;
                                            },
                                            0.0, options(), [&] { between(); }, dlsys::cuda::cuda_event_timer());
    if (t.wrong()) ++wrong;
    const double steps = double(kGpuChaseSteps);
    return {bytes / kKiB, t.time.median_us * 1e3 / steps, t.time.min_us * 1e3 / steps, t.time.max_us * 1e3 / steps};
  }

  SeriesPoint read_gbps(double bytes) {
    const auto n = static_cast<std::int64_t>(bytes) / 4;
    const auto passes = static_cast<std::int64_t>(std::ceil(kGpuReadBytesPerCall / bytes));
    dlsys::cuda::DeviceFloats partial(cuda::read_blocks());
    std::vector<float> sums(static_cast<std::size_t>(partial.count()));
    const CheckedTiming t = measure_checked([&] { cuda::read_sum(partial.get(), x, n, passes); },
                                            [&] {
                                              dlsys::cuda::copy_to_host(sums.data(), partial.get(), partial.count());
                                              double sum = 0;
                                              for (float s : sums) sum += s;
                                              return std::fabs(sum - double(passes) * double(n / 2));
                                            },
                                            0.0, options(), [&] { between(); }, dlsys::cuda::cuda_event_timer());
    if (t.wrong()) ++wrong;
    const double moved = double(n) * 4 * double(passes);
    return {bytes / kKiB, moved / (t.time.median_us * 1e3), moved / (t.time.max_us * 1e3),
            moved / (t.time.min_us * 1e3)};
  }

  // Every SM reading its shared memory at once, GB/s of the fastest call.
  double shared_gbps() {
    dlsys::cuda::DeviceFloats sink(cuda::shared_read_threads());
    std::vector<float> got(static_cast<std::size_t>(sink.count()));
    const double each = 4.0 * 8 * double(kSharedIterations);
    const CheckedTiming t = measure_checked([&] { cuda::shared_read(sink.get(), 1.0f, kSharedIterations); },
                                            [&] {
                                              dlsys::cuda::copy_to_host(got.data(), sink.get(), sink.count());
                                              double worst = 0;
                                              for (float g : got) worst = std::max(worst, std::fabs(double(g) - each));
                                              return worst;
                                            },
                                            0.0, options(), [&] { between(); }, dlsys::cuda::cuda_event_timer());
    if (t.wrong()) ++wrong;
    return cuda::shared_read_bytes(kSharedIterations) / (t.time.min_us * 1e3);
  }

  // Host to device from `host`, GB/s as a plot point; the landed bytes compared with the source's.
  SeriesPoint copy_gbps(const unsigned char* host, void* device, double bytes) {
    const auto b = static_cast<std::int64_t>(bytes);
    std::vector<unsigned char> back(static_cast<std::size_t>(b));
    const CheckedTiming t = measure_checked(
        [&] { dlsys::cuda::copy_to_device(device, host, b); },
        [&] {
          dlsys::cuda::copy_to_host_bytes(back.data(), device, b);
          return std::memcmp(back.data(), host, std::size_t(b)) == 0 ? 0.0 : 1.0;
        },
        0.0, options(), [&] { between(); });  // the host's clock: cudaMemcpy from the host returns when done
    if (t.wrong()) ++wrong;
    return {bytes / kKiB, bytes / (t.time.median_us * 1e3), bytes / (t.time.max_us * 1e3),
            bytes / (t.time.min_us * 1e3)};
  }
};

// A pinned host buffer, freed when it goes.
struct PinnedBytes {
  explicit PinnedBytes(std::int64_t bytes) : data(static_cast<unsigned char*>(cuda::pinned_allocate(bytes))) {}
  ~PinnedBytes() { cuda::pinned_free(data); }
  PinnedBytes(const PinnedBytes&) = delete;
  PinnedBytes& operator=(const PinnedBytes&) = delete;
  unsigned char* data;
};

void measure_copies(GpuProbe& probe, GpuProbes& g, RunResult& result) {
  probe.run.progress("copies from the host to GPU 0: pageable and pinned");
  const std::vector<double> sizes = copy_sizes();
  const auto largest = static_cast<std::int64_t>(sizes.back());
  std::vector<unsigned char> pageable(static_cast<std::size_t>(largest));
  PinnedBytes pinned(largest);
  for (std::int64_t i = 0; i < largest; ++i)
    pageable[std::size_t(i)] = pinned.data[i] = static_cast<unsigned char>(i * 131);
  dlsys::cuda::DeviceBuffer<unsigned char> device(largest);
  Series from_pageable = curve("copy_pageable", "host to GPU, pageable memory", "bytes copied", "copy rate", "GB/s");
  Series from_pinned = curve("copy_pinned", "host to GPU, pinned memory", "bytes copied", "copy rate", "GB/s");
  for (double bytes : sizes) {
    from_pageable.points.push_back(probe.copy_gbps(pageable.data(), device.get(), bytes));
    from_pinned.points.push_back(probe.copy_gbps(pinned.data, device.get(), bytes));
  }
  g.copy_bytes = sizes.back();
  g.pageable_gbps = from_pageable.points.back().y;
  g.pinned_gbps = from_pinned.points.back().y;
  result.series.push_back(std::move(from_pageable));
  result.series.push_back(std::move(from_pinned));

  probe.run.progress("GPU 0 to GPU 1, where there is a second GPU");
  const cuda::PeerCopy peer = cuda::peer_copy(largest, probe.options());
  g.gpus = peer.gpus;
  g.peer_access = peer.peer_access;
  if (peer.gpus >= 2) {
    if (!peer.matched) ++probe.wrong;
    g.peer_gbps = double(largest) / (peer.time.median_us * 1e3);
  }
}

}  // namespace

std::vector<double> gpu_working_sets(const HardwareParams& p, double l2_bytes) {
  return working_sets(std::max<std::int64_t>(p.min_bytes, cuda::kGpuLineBytes),
                      static_cast<std::int64_t>(gpu_max_bytes(p, l2_bytes)), p.points_per_octave);
}

double gpu_progress_parts(const HardwareParams& p, double l2_bytes) {
  return double(gpu_working_sets(p, l2_bytes).size()) + 3;
}

GpuBytes gpu_bytes(const HardwareParams& p, double l2_bytes) {
  const double largest = gpu_max_bytes(p, l2_bytes);
  return {.device = 2 * largest + kCopyToBytes, .host = std::max(2 * largest, 3 * kCopyToBytes)};
}

GpuProbes measure_gpu(roofline::RooflineRun& run, const HardwareParams& p, const GpuFacts& facts, RunResult& result) {
  GpuProbes g;
  const std::vector<double> sizes = gpu_working_sets(p, facts.l2_cache_bytes);
  const double largest = sizes.back();
  run.progress("GPU 0: linking the chase's lines and filling the read stream's array");
  dlsys::cuda::DeviceBuffer<std::uint32_t> lines(static_cast<std::int64_t>(largest) / 4);
  std::vector<std::uint32_t> staged(std::size_t(largest) / 4, 0);
  dlsys::cuda::DeviceFloats x(static_cast<std::int64_t>(largest) / 4);
  {
    std::vector<float> fill(static_cast<std::size_t>(x.count()));
    for (std::size_t i = 0; i < fill.size(); ++i) fill[i] = float(i & 1);
    x.upload(fill.data());
  }
  GpuProbe probe{run, p, lines, staged, x.get()};

  Series latency = curve("gpu_latency", "GPU latency, one thread", "working set", "latency per load", "ns");
  Series read = curve("gpu_bandwidth", "GPU read bandwidth, every SM", "working set", "read bandwidth", "GB/s");
  for (double bytes : sizes) {
    run.progress(fmt::format("GPU 0, working set {}: chase and read", format_bytes_binary(bytes)));
    latency.points.push_back(probe.chase_ns(bytes));
    read.points.push_back(probe.read_gbps(bytes));
  }
  g.levels = {level("L1", latency, read, 0, kGpuL1BandBytes),
              level("L2", latency, read, kGpuL2BandFromBytes, facts.l2_cache_bytes / 2),
              level("HBM", latency, read, 4 * facts.l2_cache_bytes, largest)};
  g.sm_clock_mhz = cuda::sm_clock_mhz();
  for (GpuLevel& l : g.levels) l.latency_cycles = l.latency_ns * g.sm_clock_mhz / 1e3;
  const GpuLevel &l2 = g.levels[1], &hbm = g.levels[2];
  const double hbm_gbps = hbm.read_gbps;
  g.hbm_over_theoretical = facts.theoretical_gbps > 0 ? hbm_gbps / facts.theoretical_gbps : 0;
  g.hbm_hundreds_of_cycles = hbm.points_inside > 0 && hbm.latency_cycles >= kGpuHbmLeastCycles;
  g.l2_well_below_hbm =
      l2.points_inside > 0 && hbm.points_inside > 0 && l2.latency_ns <= kGpuL2OverHbmLatency * hbm.latency_ns;
  g.hbm_within_theoretical = hbm.points_inside > 0 && g.hbm_over_theoretical <= 1;
  result.series.push_back(std::move(latency));
  result.series.push_back(std::move(read));

  run.progress("GPU 0: every SM reading its shared memory");
  g.shared_gbps = probe.shared_gbps();
  g.shared_theory_gbps = shared_memory_gbps_aggregate(g.sm_clock_mhz, facts.sms);
  g.shared_over_theory = g.shared_gbps / g.shared_theory_gbps;
  g.shared_over_hbm = hbm_gbps > 0 ? g.shared_gbps / hbm_gbps : 0;

  measure_copies(probe, g, result);
  if (facts.pcie && facts.pcie->link_gbps > 0)
    g.pcie_copy =
        PcieCopyCheck{g.pinned_gbps / facts.pcie->link_gbps, g.pinned_gbps >= facts.pcie->achievable_low_gbps &&
                                                                 g.pinned_gbps <= facts.pcie->achievable_high_gbps};
  g.wrong = probe.wrong;
  return g;
}

}  // namespace dlsys::hardware
