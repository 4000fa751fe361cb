#pragma once
#include "lessons/common/typed_lesson.h"
#include "lessons/hardware/hardware_params.h"
#include "lessons/hardware/hardware_steps.h"
#include "lessons/hardware/hardware_values.h"

namespace dlsys {

// Lesson `hardware`: the memory hierarchy measured on this machine (a pointer chase for latency and a read stream for
// bandwidth against the working set, on one thread and on all), the levels it finds named by the cache sizes the OS
// reports, and the course's table of GPU and link figures beside what each really counts. On the CUDA backend the
// same probes run on GPU 0 too, with its shared memory and the copies that feed it (hardware_gpu.h).
class HardwareLesson final : public TypedLesson<hardware::HardwareParams, hardware::HardwareTheory,
                                                hardware::HardwareMeasured, hardware::HardwareSteps> {
 public:
  std::string id() const override { return "hardware"; }
  std::string chapter() const override { return "Foundations"; }
  // One working set per doubling up to eight times a 32 MiB last-level cache, fewer chase steps and repeats: about
  // 4 s on 2 cores, every level still has points well inside it, and main memory has two of its own (with the sweep
  // ending at 128 MiB, 64 MiB was still read partly from the cache, and memory read above STREAM in one quick run in
  // three).
  std::vector<std::string> quick_params() const override {
    return {"points_per_octave=1", "max_working_set=256MiB", "chase_steps=262144", "repeats=3", "stream_bytes=64MiB"};
  }
  DLSYS_LESSON_OVERRIDES(params, read_params, theory_of, check_params, budget_of, step_data_of, run_with)
};

namespace hardware {
// How far the read stream's DRAM plateau may lie above STREAM's best kernel and still count as at most it: a stream
// of reads alone skips the bus's turns between reading and writing that STREAM's kernels pay.
inline constexpr double kStreamTolerance = 0.15;
// Bytes each timed call of the read stream reads: working sets smaller than this are read several times over.
inline constexpr double kReadBytesPerCall = 64.0 * 1024 * 1024;
// The sweep's working sets: min, then points_per_octave per doubling, up to max (always included).
std::vector<double> working_sets(std::int64_t min_bytes, std::int64_t max_bytes, int points_per_octave);
}  // namespace hardware

}  // namespace dlsys
