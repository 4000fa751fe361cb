#pragma once
// The hardware lesson's GPU half, on the CUDA backend: the CPU's two probes again (a pointer chase for latency and a
// read stream for bandwidth against the working set) on GPU 0, its shared memory against 128 B per clock per SM, and
// the copies that feed it (host to device from pageable and pinned memory; GPU to GPU where there are two).
#include <vector>

#include "engine/run_result.h"
#include "lessons/hardware/hardware_params.h"
#include "lessons/hardware/hardware_values.h"
#include "lessons/roofline/roofline_measure.h"

namespace dlsys::hardware {

// Where the GPU's levels are looked for, by working set: L1 up to kGpuL1BandBytes (a part of the SM's 256 KiB of L1
// and shared memory on an H100, whatever the split), L2 from kGpuL2BandFromBytes to half the L2 (an H100's L2 is two
// halves, and a line in the far half costs more), HBM from 4 x the L2.
inline constexpr double kGpuL1BandBytes = 64.0 * 1024;
inline constexpr double kGpuL2BandFromBytes = 1024.0 * 1024;
// The checks on the levels found: HBM several hundred cycles away, the L2 well below it.
inline constexpr double kGpuHbmLeastCycles = 200;
inline constexpr double kGpuL2OverHbmLatency = 0.8;
// The working sets of the GPU's sweep: the CPU's, extended to 4 x the L2 where they stop short of it.
std::vector<double> gpu_working_sets(const HardwareParams& p, double l2_bytes);
// Parts of the run's progress the GPU half adds (each working set, shared memory, the copies).
double gpu_progress_parts(const HardwareParams& p, double l2_bytes);
// Bytes the probes hold at once on GPU 0 (the chase's lines and the read stream's array at the largest working set,
// then the copies' target) and on the host beside the CPU half's (their staging, and the copies' sources).
struct GpuBytes {
  double device = 0, host = 0;
};
GpuBytes gpu_bytes(const HardwareParams& p, double l2_bytes);

// Measures GPU 0 (its facts read already) and adds the curves to `result`.
GpuProbes measure_gpu(roofline::RooflineRun& run, const HardwareParams& p, const GpuFacts& facts, RunResult& result);

}  // namespace dlsys::hardware
