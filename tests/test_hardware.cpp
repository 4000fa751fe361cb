// The hardware lesson (lessons/hardware): the chase's cycle, the read stream's sums, the closed forms that correct the
// course's table, the naming of levels from a staircase, and a real run read back from its JSON.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "engine/backend.h"
#include "engine/errors.h"
#include "engine/host_buffer.h"
#include "kernels/hardware/hardware.h"
#include "kernels/hardware/hardware_math.h"
#include "kernels/hardware/pcie_link.h"
#include "lessons/common/run_lesson.h"
#include "lessons/hardware/hardware_lesson.h"
#include "lessons/hardware/hardware_levels.h"
#include "tests/support/typed_values.h"

using namespace dlsys;
using namespace dlsys::hardware;

TEST_CASE("hardware chase: Sattolo links every line into one cycle, and the walk follows it") {
  for (std::int64_t count : {1, 2, 3, 7, 64, 1000, 65536}) {
    std::vector<ChaseLine> lines(static_cast<std::size_t>(count));
    link_random_cycle(lines.data(), count, 42);
    CHECK(cycle_length(lines.data(), count) == count);
    // Every line has exactly one line before it: the links are a permutation.
    std::vector<int> before(static_cast<std::size_t>(count), 0);
    for (const ChaseLine& line : lines) ++before[static_cast<std::size_t>(line.next - lines.data())];
    for (int b : before) CHECK(b == 1);
    // count steps from the first line come back to it.
    CHECK(chase(lines.data(), count, 1, count) == 0);
    if (count >= 3) CHECK(lines[0].next != &lines[0]);  // no line links to itself in a longer cycle
  }
}

TEST_CASE("hardware chase: the successors the GPU's lines are built from are the same cycle, and line_after walks it") {
  for (std::int64_t count : {1, 2, 5, 4096}) {
    const std::vector<std::uint32_t> successor = random_cycle_successors(count, 9);
    std::vector<ChaseLine> lines(static_cast<std::size_t>(count));
    link_random_cycle(lines.data(), count, 9);
    for (std::int64_t i = 0; i < count; ++i)
      CHECK(lines[std::size_t(i)].next - lines.data() == std::int64_t(successor[std::size_t(i)]));
    CHECK(line_after(successor, 0, count) == 0);  // one lap: back at the start
    CHECK(line_after(successor, 0, 1) == successor[0]);
    CHECK(line_after(successor, 0, count + 1) == successor[0]);
  }
}

TEST_CASE("hardware chase: one cycle per thread's part, each walked from its own first line") {
  const std::int64_t count = 4096;
  std::vector<ChaseLine> lines(static_cast<std::size_t>(count));
  link_random_cycles(lines.data(), count, 2, 7);
  CHECK(cycle_length(lines.data(), count / 2) == count / 2);
  CHECK(cycle_length(lines.data() + count / 2, count / 2) == count / 2);
  // After a whole lap each walk is back where it started: offsets 0 and count / 2.
  CHECK(chase(lines.data(), count, 2, count / 2) == count / 2);
}

TEST_CASE("hardware read stream: the sum of a pass is exact, whatever the passes and threads") {
  for (std::int64_t n : {1, 63, 128, 1000, 4099, 1 << 16}) {
    std::vector<float> x(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) x[std::size_t(i)] = float(i & 1);
    for (int threads : {1, 2, 3})
      for (std::int64_t passes : {1, 5}) CHECK(read_sum(x.data(), n, passes, threads) == double(n / 2));
  }
}

TEST_CASE("hardware closed forms: bus width times transfers, shared memory per SM and summed, links like for like") {
  // A100 40 GB: 5120 bits = 640 B, 1215 MHz on both edges: 1555.2 GB/s; H100 SXM at 2619 MHz: 3352.32 GB/s.
  CHECK(theoretical_bandwidth_gbps(5120, 1215) == doctest::Approx(1555.2).epsilon(1e-12));
  CHECK(theoretical_bandwidth_gbps(kH100SxmMemoryBusBits, kH100SxmMemoryClockMhz) ==
        doctest::Approx(3352.32).epsilon(1e-12));
  CHECK(theoretical_bandwidth_gbps(5120, 1215, 1) == doctest::Approx(777.6).epsilon(1e-12));
  // 128 B per clock per SM: A100 at 1410 MHz 180.48 GB/s per SM, 19491.84 GB/s over 108 SMs (the ~19 TB/s quoted).
  CHECK(shared_memory_gbps_per_sm(kA100SmClockMhz) == doctest::Approx(180.48).epsilon(1e-12));
  CHECK(shared_memory_gbps_aggregate(kA100SmClockMhz, kA100Sms) == doctest::Approx(19491.84).epsilon(1e-12));
  CHECK(shared_memory_gbps_aggregate(kH100SxmSmClockMhz, kH100SxmSms) == doctest::Approx(33454.08).epsilon(1e-12));
  // The course's 60x is 1800 / 32 = 56.25; like for like 900 / 32 = 28.125; against Gen5 900 / 64 = 14.0625.
  CHECK(course_nvlink_over_pcie() == 56.25);
  CHECK(nvlink5_over_pcie_gen4() == 28.125);
  CHECK(nvlink5_over_pcie_gen5() == 14.0625);
  CHECK(bidirectional_gbps(kPcieGen4x16Gbps) == 64);
  // One H100: 450 GB/s NVLink against a 400 Gb/s = 50 GB/s port, per direction: 9x; the course's own figures 2.25x.
  CHECK(gbit_to_gbyte(400) == 50);
  CHECK(nvlink4_over_infiniband_per_gpu() == 9);
  CHECK(course_nvlink_over_infiniband_node() == 2.25);
}

TEST_CASE("hardware PCIe: rates per direction after the line code, and the share packets leave for data") {
  CHECK(pcie_link_gbps({1, 16}) == 4.0);  // 2.5 GT/s x 8/10 x 16 lanes / 8 bits
  CHECK(pcie_link_gbps({2, 8}) == 4.0);
  CHECK(pcie_link_gbps({3, 16}) == doctest::Approx(8.0 * 128 / 130 * 2).epsilon(1e-15));
  CHECK(pcie_link_gbps({4, 16}) == doctest::Approx(31.5077).epsilon(1e-5));
  CHECK(pcie_link_gbps({5, 16}) == doctest::Approx(63.0154).epsilon(1e-5));
  CHECK(pcie_link_gbps({6, 16}) == 0);  // flits, not a line code: not modelled
  CHECK(pcie_payload_efficiency(kPcieSmallPayloadBytes) == 128.0 / 152);
  CHECK(pcie_payload_efficiency(kPcieLargePayloadBytes) == 256.0 / 280);
  // The H100's pinned copy (54.8 GB/s over Gen5 x16) lies inside the band: 53.1 .. 57.6 GB/s.
  const double link = pcie_link_gbps({5, 16});
  CHECK(link * pcie_payload_efficiency(128) < 54.8);
  CHECK(link * pcie_payload_efficiency(256) > 54.8);
}

TEST_CASE("hardware PCIe: the link a device reports, as Linux writes it, and what is not a link") {
  CHECK(pcie_generation_of("32.0 GT/s PCIe") == 5);
  CHECK(pcie_generation_of("16.0 GT/s PCIe") == 4);
  CHECK(pcie_generation_of("8 GT/s") == 3);
  CHECK(pcie_generation_of("5.0 GT/s PCIe") == 2);
  CHECK(pcie_generation_of("2.5 GT/s PCIe") == 1);
  CHECK(pcie_generation_of("Unknown") == 0);
  CHECK(pcie_generation_of("64.0 GT/s PCIe") == 0);
  CHECK(pcie_generation_of("32.0") == 0);
  CHECK(pcie_generation_of("") == 0);
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("dlsys-test-pcie-device-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto write = [&](const char* name, const char* text) { std::ofstream(dir / name) << text; };
  write("max_link_speed", "32.0 GT/s PCIe\n");
  write("max_link_width", "16\n");
  const std::optional<PcieLink> link = read_pcie_link(dir.string());
  REQUIRE(link.has_value());
  CHECK(link->generation == 5);
  CHECK(link->lanes == 16);
  write("max_link_width", "0\n");
  CHECK_FALSE(read_pcie_link(dir.string()).has_value());
  write("max_link_width", "8\n");
  write("max_link_speed", "Unknown\n");
  CHECK_FALSE(read_pcie_link(dir.string()).has_value());
  std::filesystem::remove_all(dir);
  CHECK_FALSE(read_pcie_link(dir.string()).has_value());  // no such device
}

TEST_CASE("hardware lesson: theory holds the sweep and the corrected figures") {
  const HardwareLesson lesson;
  const HardwareTheory t =
      test::typed_theory(lesson, {"min_working_set=4KiB", "max_working_set=64KiB", "points_per_octave=1"});
  CHECK(t.working_sets_bytes == std::vector<double>{4096, 8192, 16384, 32768, 65536});
  // Two per doubling, whole 64 B lines: 4096 sqrt(2) = 5792.6 -> 91 lines = 5824.
  CHECK(working_sets(4096, 16384, 2) == std::vector<double>{4096, 5824, 8192, 11584, 16384});
  CHECK(working_sets(4096, 10000, 1) == std::vector<double>{4096, 8192, 9984});
  CHECK(t.a100_40gb_hbm_gbps == doctest::Approx(1555.2));
  CHECK(t.nvlink_pcie_gen4_ratio == 28.125);
  CHECK(t.a100_smem_over_hbm == doctest::Approx(19491.84 / 1555.2));
}

TEST_CASE("hardware lesson: a sweep that does not go up is refused naming both parameters") {
  const HardwareLesson lesson;
  const ParamValues params = ParamValues::parse(lesson.params(), {"min_working_set=1MiB", "max_working_set=1MiB"});
  CHECK_THROWS_WITH_AS(lesson.validate(params, BackendKind::Cpu),
                       doctest::Contains("'min_working_set' and 'max_working_set'"), BadInput);
}

namespace {
const std::vector<CpuCache> kCaches = {{1, "Data", 32768, 1}, {2, "Unified", 1 << 20, 1}, {3, "Unified", 32 << 20, 2}};

// Working sets 4 KiB .. 128 MiB, one per doubling, with latencies stepping where `steps_at` say (bytes above each).
Staircase stairs(const std::vector<double>& steps_at, const std::vector<double>& latencies) {
  Staircase s;
  for (double bytes = 4096; bytes <= 128.0 * (1 << 20); bytes *= 2) {
    std::size_t level = 0;
    while (level < steps_at.size() && bytes > steps_at[level]) ++level;
    s.bytes.push_back(bytes);
    s.latency_ns.push_back(latencies[level]);
    s.read_gbps_one.push_back(100.0 / double(level + 1));
  }
  return s;
}
}  // namespace

TEST_CASE("hardware levels: which level holds a working set by size") {
  const std::vector<Tier> tiers = tiers_of(kCaches);
  REQUIRE(tiers.size() == 4);
  CHECK(tiers[3].name == "DRAM");
  CHECK(tiers[tier_by_size(tiers, 16384)].name == "L1");
  CHECK(tiers[tier_by_size(tiers, 32768)].name == "L1");
  CHECK(tiers[tier_by_size(tiers, 32769)].name == "L2");
  CHECK(tiers[tier_by_size(tiers, 32 << 20)].name == "L3");
  CHECK(tiers[tier_by_size(tiers, 64 << 20)].name == "DRAM");
}

TEST_CASE("hardware levels: a staircase stepping at the reported sizes is found and named level by level") {
  const FoundLevels f = find_levels(tiers_of(kCaches), stairs({32768, 1 << 20, 32 << 20}, {1, 4, 14, 100}));
  REQUIRE(f.levels.size() == 4);
  CHECK(f.levels[0].latency_ns == 1);
  CHECK(f.levels[1].latency_ns == 4);
  CHECK(f.levels[2].latency_ns == 14);
  CHECK(f.levels[3].latency_ns == 100);
  CHECK(f.levels[1].last_served_bytes == 1 << 20);
  CHECK(f.levels[3].read_gbps_one == 25);
  CHECK(f.levels[0].read_over_dram == 4);
  // Little's law: 25 GB/s x 100 ns / 64 B = 39.0625 lines on their way.
  CHECK(f.levels[3].lines_in_flight == doctest::Approx(39.0625));
  CHECK(f.served_by.front() == "L1");
  CHECK(f.served_by.back() == "DRAM");
  CHECK(f.plateaus_in_bands);
}

TEST_CASE("hardware levels: a last-level cache that holds less than its size passes; one that holds more does not") {
  // Shared with other programs: L3 ends at 4 MiB of its 32, memory takes over early.
  const FoundLevels shared = find_levels(tiers_of(kCaches), stairs({32768, 1 << 20, 4 << 20}, {1, 4, 14, 100}));
  CHECK(shared.levels[2].last_served_bytes == 4 << 20);
  CHECK(shared.plateaus_in_bands);
  // An L3 plateau running on to 128 MiB, four times its size: not what the OS reports.
  const FoundLevels beyond = find_levels(tiers_of(kCaches), stairs({32768, 1 << 20, 128 << 20}, {1, 4, 14, 100}));
  CHECK_FALSE(beyond.levels[2].in_band.value);
  CHECK_FALSE(beyond.plateaus_in_bands);
  // Two levels no slower than each other are not two levels.
  const FoundLevels flat = find_levels(tiers_of(kCaches), stairs({32768, 1 << 20, 32 << 20}, {1, 1.1, 14, 100}));
  CHECK_FALSE(flat.plateaus_in_bands);
}

TEST_CASE("hardware levels: a last-level cache reported far larger than it holds still shows main memory's plateau") {
  // A virtual machine told of its host's 480 MiB L3: the sweep ends at 128 MiB, inside it, but the latency steps up
  // past 8 MiB. The slower working sets are main memory's, and the staircase passes.
  const std::vector<CpuCache> host_sized = {
      {1, "Data", 32768, 1}, {2, "Unified", 1 << 20, 1}, {3, "Unified", 480.0 * (1 << 20), 2}};
  const FoundLevels f = find_levels(tiers_of(host_sized), stairs({32768, 1 << 20, 8 << 20}, {1, 4, 40, 150}));
  CHECK(f.memory_inside_last_cache);
  CHECK(f.levels[2].latency_ns == 40);
  CHECK(f.levels[2].last_served_bytes == 8 << 20);
  CHECK(f.levels[3].latency_ns == 150);
  CHECK(f.levels[3].points_inside == 4);  // 16, 32, 64 and 128 MiB
  CHECK(f.served_by.back() == "DRAM");
  CHECK(f.plateaus_in_bands);
  // A quick sweep, one point per doubling, climbs through the spill over several points: memory's plateau is where
  // the climb ends (16-128 MiB), not the first point past the step (8 MiB, partly cached).
  Staircase climb = stairs({32768, 1 << 20, 4 << 20}, {1, 4, 37, 0});
  for (std::size_t p = 0; p < climb.bytes.size(); ++p) {
    const double mib = climb.bytes[p] / (1 << 20);
    if (mib >= 8) climb.latency_ns[p] = mib == 8 ? 57 : mib == 16 ? 150 : mib == 32 ? 170 : mib == 64 ? 180 : 185;
  }
  const FoundLevels climbed = find_levels(tiers_of(host_sized), climb);
  CHECK(climbed.memory_inside_last_cache);
  CHECK(climbed.levels[3].points_inside == 4);
  CHECK(climbed.levels[3].latency_ns == 175);  // the median of 150, 170, 180 and 185
  CHECK(climbed.levels[2].latency_ns == 37);
  // Where the sweep does pass the reported size, nothing is borrowed from the cache's band.
  CHECK_FALSE(
      find_levels(tiers_of(kCaches), stairs({32768, 1 << 20, 4 << 20}, {1, 4, 14, 100})).memory_inside_last_cache);
}

TEST_CASE("hardware levels: main memory reads at its slowest streams, not at a working set the cache still feeds") {
  // As in a quick run on this lab's 2-core machine (its host reports 480 MiB of L3): 2 threads read 54.1, 48.8 and 34
  // GB/s at 32, 64 and 128 MiB (fastest calls), while latency had already stepped up past 8 MiB. Only 128 MiB reads
  // from memory alone; with 64 MiB counted too, memory would read at 41.4 GB/s, above that machine's STREAM.
  const std::vector<CpuCache> host_sized = {
      {1, "Data", 32768, 1}, {2, "Unified", 1 << 20, 1}, {3, "Unified", 480.0 * (1 << 20), 2}};
  Staircase s = stairs({32768, 1 << 20, 8 << 20}, {1, 4, 40, 150});
  s.read_gbps_all = s.read_gbps_one;
  for (std::size_t p = 0; p < s.bytes.size(); ++p) {
    const double mib = s.bytes[p] / (1 << 20);
    if (mib >= 16) s.read_gbps_all[p] = mib == 16 ? 54.9 : mib == 32 ? 54.1 : mib == 64 ? 48.8 : 34.0;
  }
  const FoundLevels f = find_levels(tiers_of(host_sized), s);
  REQUIRE(f.memory_inside_last_cache);
  CHECK(f.levels[3].read_gbps_all == 34.0);
}

TEST_CASE("hardware lesson: a small run is checked and read back from its JSON as the same structs") {
  const HardwareLesson lesson;
  RunControl control;
  const ParamValues params = ParamValues::parse(
      lesson.params(), {"max_working_set=64KiB", "chase_steps=4096", "repeats=1", "stream_bytes=4MiB", "threads=2"});
  const RunResult run = run_lesson(lesson, params, BackendKind::Cpu, control);
  const HardwareMeasured& m = test::measured_of<HardwareMeasured>(run);
  CHECK(m.wrong == 0);
  CHECK(m.served_by.size() == 9);  // 4 KiB .. 64 KiB, two working sets per doubling
  CHECK(m.stream_gbps > 0);
  // Without a GPU the facts are empty and say why; with one, bus width x clock x 2 from the runtime's own numbers.
  if (!cuda_status().available) {
    CHECK(m.gpu.name.empty());
    CHECK_FALSE(m.gpu.absent_reason.empty());
  } else {
    CHECK(m.gpu.theoretical_gbps == theoretical_bandwidth_gbps(m.gpu.memory_bus_bits, m.gpu.memory_clock_mhz));
  }
  REQUIRE(run.find_series("latency_one") != nullptr);
  REQUIRE(run.find_series("bandwidth_all") != nullptr);
  CHECK(run.find_series("latency_one")->points.size() == m.served_by.size());
  const nlohmann::ordered_json json = to_json(run);
  RunResult back;
  lesson.read_values(json.at("theory"), json.at("measured"), back);
  CHECK(test::measured_of<HardwareMeasured>(back).served_by == m.served_by);
  // A sweep that never left L2 found no main memory inside the last cache: the key is absent, and where a run kept it,
  // it reads back.
  CHECK_FALSE(m.last_cache_held_bytes.has_value());
  CHECK_FALSE(json.at("measured").contains("last_cache_held_bytes"));
  nlohmann::ordered_json held = json;
  held["measured"]["last_cache_held_bytes"] = 8388608.0;
  RunResult held_back;
  lesson.read_values(held.at("theory"), held.at("measured"), held_back);
  CHECK(test::measured_of<HardwareMeasured>(held_back).last_cache_held_bytes == 8388608.0);
}
