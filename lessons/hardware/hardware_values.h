#pragma once
// The hardware lesson's typed values. Theory: the sweep's working sets and the closed forms about GPUs and links that
// correct the course's table. Measured: this machine's caches as the OS reports them, the levels the staircase
// found, and the checks. The curves themselves are the run's series (latency_one, latency_all, bandwidth_one,
// bandwidth_all).
#include <optional>
#include <string>
#include <vector>

#include "engine/lesson_values.h"
#include "lessons/roofline/last_level_cache.h"

namespace dlsys {
DLSYS_VALUES_JSON(CpuCache, level, type, size_bytes, shared_cpus)
}  // namespace dlsys

namespace dlsys::hardware {

struct HardwareTheory {
  std::vector<double> working_sets_bytes;  // the sweep: min to max, points_per_octave per doubling
  // Peak bandwidth from bus width and memory clock (DDR: two transfers per clock), GB/s.
  double a100_40gb_hbm_gbps = 0;  // 5120 bits at 1215 MHz: 1555.2
  double h100_sxm_hbm_gbps = 0;   // 5120 bits at 2619 MHz: 3352.3
  // Shared memory, 128 B per clock per SM at the boost clock: per SM and summed over every SM, GB/s.
  double a100_smem_gbps_per_sm = 0, a100_smem_gbps_aggregate = 0;
  double h100_smem_gbps_per_sm = 0, h100_smem_gbps_aggregate = 0;
  // Shared memory summed over the SMs against HBM, on the same GPU (A100 40 GB, H100 SXM).
  double a100_smem_over_hbm = 0, h100_smem_over_hbm = 0;
  // NVLink 5 against PCIe: the course's 1800 / 32, then like for like against Gen4 and against the Gen5 of a B200 host.
  double course_nvlink_pcie_ratio = 0, nvlink_pcie_gen4_ratio = 0, nvlink_pcie_gen5_ratio = 0;
  // One H100's NVLink against InfiniBand: like for like (per GPU, per direction), and as the course compares.
  double nvlink_infiniband_ratio = 0, course_nvlink_infiniband_ratio = 0;
};
DLSYS_VALUES_JSON(HardwareTheory, working_sets_bytes, a100_40gb_hbm_gbps, h100_sxm_hbm_gbps, a100_smem_gbps_per_sm,
                  a100_smem_gbps_aggregate, h100_smem_gbps_per_sm, h100_smem_gbps_aggregate, a100_smem_over_hbm,
                  h100_smem_over_hbm, course_nvlink_pcie_ratio, nvlink_pcie_gen4_ratio, nvlink_pcie_gen5_ratio,
                  nvlink_infiniband_ratio, course_nvlink_infiniband_ratio)

// One level of the hierarchy as the staircase measured it.
struct LevelPlateau {
  std::string name;           // L1, L2, L3, DRAM
  double capacity_bytes = 0;  // what one thread can hold there (0 for DRAM: no limit in this sweep)
  // Medians over the level's plateau of each working set's fastest call (the one other programs disturbed least).
  double latency_ns = 0;     // the chase, one thread
  double read_gbps_one = 0;  // the read stream on one thread
  double read_gbps_all = 0;  // and on every thread (0 when the run had one)
  // Little's law: lines a core keeps on their way to reach that bandwidth at that latency (GB/s x ns / 64 B).
  double lines_in_flight = 0;
  double read_over_dram = 0;  // read_gbps_one against DRAM's, one thread
  int points_inside = 0;      // working sets on the plateau: in the level's band, within kPlateauSpread of its lowest
                              // (main memory: its highest)
  double last_served_bytes = 0;  // the largest working set the latency curve names this level
  FlagField in_band;             // a plateau in its band; nothing named for it past its size or below a lower level's
};
DLSYS_VALUES_JSON(LevelPlateau, name, capacity_bytes, latency_ns, read_gbps_one, read_gbps_all, lines_in_flight,
                  read_over_dram, points_inside, last_served_bytes, in_band)

// The GPU this machine has, as cudaDeviceProp describes it (empty name when none answered), beside its datasheet.
// GPU 0's PCIe link as its own capability gives it (sysfs), what that carries per direction after the line code, and
// the band a copy can reach once packets of 128 to 256 bytes pay their framing (kernels/hardware/pcie_link.h).
struct PcieFacts {
  int generation = 0, lanes = 0;
  double link_gbps = 0;
  double achievable_low_gbps = 0, achievable_high_gbps = 0;
};
DLSYS_VALUES_JSON(PcieFacts, generation, lanes, link_gbps, achievable_low_gbps, achievable_high_gbps)

struct GpuFacts {
  std::string name;
  std::string absent_reason;  // why no GPU's facts are here ("" when they are)
  int sms = 0;
  double shared_memory_per_sm_bytes = 0, shared_memory_per_block_optin_bytes = 0, l2_cache_bytes = 0;
  int memory_bus_bits = 0;
  double memory_clock_mhz = 0;
  double theoretical_gbps = 0;    // bus width x memory clock x 2
  double datasheet_gbps = 0;      // the lab's table for this part (0 when it does not know it)
  std::optional<PcieFacts> pcie;  // absent where the system does not say (no sysfs entry), and in older recordings
};
DLSYS_VALUES_JSON(GpuFacts, name, absent_reason, sms, shared_memory_per_sm_bytes, shared_memory_per_block_optin_bytes,
                  l2_cache_bytes, memory_bus_bits, memory_clock_mhz, theoretical_gbps, datasheet_gbps, pcie)

// The largest pinned copy against the link GPU 0 reports: its share of the encoded rate, and whether it lies in the
// achievable band (PcieFacts).
struct PcieCopyCheck {
  double pinned_over_link = 0;
  FlagField within_achievable;
};
DLSYS_VALUES_JSON(PcieCopyCheck, pinned_over_link, within_achievable)

// A level of the GPU's hierarchy as the CUDA probes found it (hardware_cuda.h): medians over the working sets inside
// its band of each one's fastest call.
struct GpuLevel {
  std::string name;  // L1, L2, HBM
  double latency_ns = 0;
  double latency_cycles = 0;  // latency_ns at the SMs' reported clock
  double read_gbps = 0;
  int points_inside = 0;  // working sets in the band (0: the sweep had none there, and the figures are 0)
};
DLSYS_VALUES_JSON(GpuLevel, name, latency_ns, latency_cycles, read_gbps, points_inside)

// What the CUDA probes measured on GPU 0 (a run on the CUDA backend only). The curves are the run's series
// (gpu_latency, gpu_bandwidth, copy_pageable, copy_pinned).
struct GpuProbes {
  std::vector<GpuLevel> levels;     // L1, L2, HBM
  double hbm_over_theoretical = 0;  // HBM's read plateau against the bus width x memory clock x 2 of GpuFacts
  double sm_clock_mhz = 0;
  double shared_gbps = 0;         // every SM reading its shared memory at once
  double shared_theory_gbps = 0;  // 128 B per clock per SM at sm_clock_mhz
  double shared_over_theory = 0, shared_over_hbm = 0;
  double copy_bytes = 0;  // the largest host-to-device copy, whose rates are these
  double pageable_gbps = 0, pinned_gbps = 0;
  std::optional<PcieCopyCheck> pcie_copy;  // where GpuFacts has the link
  int gpus = 0;
  FlagField peer_access;  // GPU 0 and GPU 1 reach each other directly
  double peer_gbps = 0;   // 0 with one GPU
  // The checks: HBM's latency several hundred cycles (at least kGpuHbmLeastCycles), the L2's well below it (at most
  // kGpuL2OverHbmLatency of it), HBM's read at most bus x clock x 2.
  FlagField hbm_hundreds_of_cycles, l2_well_below_hbm, hbm_within_theoretical;
  int wrong = 0;  // chase ends, read sums, shared sums or copies that were not what they must be
};
DLSYS_VALUES_JSON(GpuProbes, levels, hbm_over_theoretical, sm_clock_mhz, shared_gbps, shared_theory_gbps,
                  shared_over_theory, shared_over_hbm, copy_bytes, pageable_gbps, pinned_gbps, pcie_copy, gpus,
                  peer_access, peer_gbps, hbm_hundreds_of_cycles, l2_well_below_hbm, hbm_within_theoretical, wrong)

struct HardwareMeasured {
  std::vector<CpuCache> caches;        // as sysfs reports them at run time
  std::vector<LevelPlateau> levels;    // lowest first, DRAM last
  std::vector<std::string> served_by;  // the level the latency names at each working set of the sweep
  int threads = 1;
  double working_set_bytes = 0;   // the staircase step's working set
  std::string working_set_level;  // the level serving the measured point nearest to it
  double working_set_latency_ns = 0;
  // The roofline lesson's bandwidth, measured here by its own code: the fastest STREAM kernel on its arrays.
  double stream_gbps = 0;
  std::string stream_kernel;
  double dram_read_gbps = 0;  // the read stream's DRAM plateau on every thread
  double dram_read_over_stream = 0;
  FlagField plateaus_in_bands;          // each level's plateau inside its band, and each slower than the last
  FlagField dram_within_stream;         // dram_read_gbps at most stream_gbps x (1 + kStreamTolerance)
  FlagField huge_pages;                 // the system took the advice to back the chase with huge pages
  GpuFacts gpu;                         // the GPU the CUDA runtime describes, or why there is none
  int wrong = 0;                        // read sums or chase cycles that were not what they must be
  std::optional<GpuProbes> gpu_probes;  // the same hierarchy on GPU 0, on the CUDA backend
  // Where main memory's plateau lay inside the reported last-level cache (a virtual machine is told its host's size):
  // the largest working set that cache served. Absent otherwise, and in runs recorded before it was kept.
  std::optional<double> last_cache_held_bytes;
};
DLSYS_VALUES_JSON(HardwareMeasured, caches, levels, served_by, threads, working_set_bytes, working_set_level,
                  working_set_latency_ns, stream_gbps, stream_kernel, dram_read_gbps, dram_read_over_stream,
                  plateaus_in_bands, dram_within_stream, huge_pages, gpu, wrong, gpu_probes, last_cache_held_bytes)

}  // namespace dlsys::hardware
