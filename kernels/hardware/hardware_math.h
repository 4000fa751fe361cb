#pragma once
// Closed forms about memory systems, in bytes and seconds: GB means 1e9 bytes, GiB 2^30. Each figure says whether it
// counts one direction of a link or both, and one streaming multiprocessor (SM) or the whole GPU.
#include <cstdint>

namespace dlsys::hardware {

// A memory interface's peak: bus width in bytes times transfers per second. DDR memories (HBM, GDDR as reported by
// cudaDeviceProp::memoryClockRate) move data on both clock edges, 2 transfers per clock.
constexpr double theoretical_bandwidth_gbps(int bus_width_bits, double memory_clock_mhz, int transfers_per_clock = 2) {
  return double(bus_width_bits) / 8.0 * memory_clock_mhz * 1e6 * double(transfers_per_clock) / 1e9;
}

// Shared memory: 32 banks of 4 bytes, one access each per clock, per SM; the whole GPU's figure is every SM's at once.
inline constexpr double kSharedMemoryBytesPerClockPerSm = 32 * 4;
constexpr double shared_memory_gbps_per_sm(double sm_clock_mhz) {
  return kSharedMemoryBytesPerClockPerSm * sm_clock_mhz * 1e6 / 1e9;
}
constexpr double shared_memory_gbps_aggregate(double sm_clock_mhz, int sms) {
  return shared_memory_gbps_per_sm(sm_clock_mhz) * double(sms);
}

// A link's two directions together; vendors quote NVLink this way and PCIe per direction.
constexpr double bidirectional_gbps(double per_direction_gbps) { return 2 * per_direction_gbps; }
// Network links are sold in gigabits per second.
constexpr double gbit_to_gbyte(double gbit_per_s) { return gbit_per_s / 8; }

// Published parts, in the units of their datasheets.
inline constexpr int kA100MemoryBusBits = 5120;  // five HBM2 stacks of 1024 bits
inline constexpr double kA100_40GbMemoryClockMhz = 1215;
inline constexpr int kH100SxmMemoryBusBits = 5120;  // five active HBM3 stacks
inline constexpr double kH100SxmMemoryClockMhz = 2619;
inline constexpr double kA100SmClockMhz = 1410;  // boost
inline constexpr int kA100Sms = 108;
inline constexpr double kH100SxmSmClockMhz = 1980;  // boost
inline constexpr int kH100SxmSms = 132;

// Links, GB/s per direction.
inline constexpr double kPcieGen3x16Gbps = 16;  // the course's rounded figures: 8, 16, 32 GT/s x 16 lanes, 128b/130b
inline constexpr double kPcieGen4x16Gbps = 32;
inline constexpr double kPcieGen5x16Gbps = 64;
inline constexpr double kNvlink2Gbps = 150;        // V100: 6 links x 25 GB/s
inline constexpr double kNvlink3Gbps = 300;        // A100: 12 links x 25 GB/s
inline constexpr double kNvlink4Gbps = 450;        // H100: 18 links x 25 GB/s
inline constexpr double kNvlink5Gbps = 900;        // B200: 18 links x 50 GB/s
inline constexpr double kInfinibandNdrGbit = 400;  // one ConnectX-7 port: one per GPU in a DGX H100
inline constexpr double kInfinibandHdrGbit = 200;  // one ConnectX-6 port: one per GPU in a DGX A100
inline constexpr double kEthernet100Gbit = 100;    // a common data-centre Ethernet port
inline constexpr int kGpusPerDgx = 8;

// The course's "60x": NVLink 5 counted both ways against PCIe Gen4 counted one way.
constexpr double course_nvlink_over_pcie() { return bidirectional_gbps(kNvlink5Gbps) / kPcieGen4x16Gbps; }
// Like for like: both per direction (or both both ways).
constexpr double nvlink5_over_pcie_gen4() { return kNvlink5Gbps / kPcieGen4x16Gbps; }
// What a B200 host actually has beside NVLink 5: PCIe Gen5.
constexpr double nvlink5_over_pcie_gen5() { return kNvlink5Gbps / kPcieGen5x16Gbps; }
// One H100's NVLink against its own InfiniBand port, both per direction (a node has 8 of each, so per node the
// ratio is the same).
constexpr double nvlink4_over_infiniband_per_gpu() { return kNvlink4Gbps / gbit_to_gbyte(kInfinibandNdrGbit); }
// The course's comparison: one GPU's NVLink both ways against a whole node's InfiniBand one way.
constexpr double course_nvlink_over_infiniband_node() {
  return bidirectional_gbps(kNvlink4Gbps) / (kGpusPerDgx * gbit_to_gbyte(kInfinibandNdrGbit));
}

}  // namespace dlsys::hardware
