#pragma once
// The measuring stages of a roofline run, each on the CPU worker pool, each timed by engine/measure.h (warm-up calls
// untimed, then repeats; the fastest call sets a ceiling, the median is what a point shows).
#include <cstdint>
#include <string>

#include "engine/measure.h"
#include "engine/run_result.h"
#include "lessons/common/lesson.h"
#include "lessons/roofline/roofline_values.h"

namespace dlsys::roofline {

struct RooflineRun {
  RunContext& ctx;
  int threads = 1;
  int repeats = 1;
  double done = 0, total = 1;  // progress, in stages
  // The fastest the FMA chains ran at any probe so far: probes run before, between and after the other measurements,
  // so the compute ceiling is taken at the machine's quietest moment of the run, as the points are.
  double peak_gflops = 0;

  void progress(const std::string& what) { ctx.control.progress(std::min(done++ / total, 0.99), what); }
  // Times `work` with one warm-up call and the run's repeats, stopping early once timed calls took a second.
  TimingStats time(const std::function<void()>& work) const;
  // The same with at least kCeilingRepeats timed calls: a ceiling is the fastest call, and the more calls, the likelier
  // one of them ran while other programs left the cores alone.
  TimingStats time_ceiling(const std::function<void()>& work) const;
};

// A RoofPoint from a kernel's counted FLOP and bytes and its timing (median and fastest call).
RoofPoint roof_point(std::string id, std::string label, std::string name, double flop, double bytes,
                     const TimingStats& t, std::string traffic);

// One probe of the compute ceiling: independent FMA chains on every thread, a few milliseconds per call; raises
// run.peak_gflops to its fastest call's GFLOP/s.
void probe_fma_peak(RooflineRun& run);

// STREAM copy, scale (y = 2x), add and triad on arrays of `array_bytes` each, then the intensity sweep and the row
// softmax on the same arrays; fills m.stream, the stream_* rates, y2x, m.sweep, and softmax into m.kernels.
void measure_streams_and_sweep(RooflineRun& run, std::int64_t array_bytes, RooflineMeasured& m);

// The lab's other kernels placed on the roof: matmul three ways, standard and flash attention, a decode GEMV and a
// prefill GEMM; appended to m.kernels.
void measure_placed_kernels(RooflineRun& run, RooflineMeasured& m);

// Time per call of y = 2x on tiny arrays, on this thread and handed to the worker pool: series overhead_call and
// overhead_pool, and the floors.
void measure_overhead(RooflineRun& run, RunResult& result, RooflineMeasured& m);

}  // namespace dlsys::roofline
