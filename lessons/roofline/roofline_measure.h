#pragma once
// The measuring stages of a roofline run, each on the CPU worker pool, each timed by engine/measure.h (warm-up calls
// untimed, then repeats; the fastest call sets a ceiling, the median is what a point shows).
#include <cstdint>
#include <string>

#include "engine/measure.h"
#include "engine/run_result.h"
#include "kernels/matmul/tile_math.h"
#include "lessons/common/lesson.h"
#include "lessons/common/run_plan.h"
#include "lessons/roofline/roofline_params.h"
#include "lessons/roofline/roofline_values.h"

namespace dlsys::roofline {

struct RooflineRun {
  RunContext& ctx;
  const RooflineParams& params;
  RunPlan plan;  // one part per progress message below, each of weight 1
  int threads = 1;
  int repeats = 1;
  // The device the probes run on: the hardware lesson keeps its STREAM on the CPU whatever the run's backend, as its
  // CPU probes are held against it.
  BackendKind backend = BackendKind::Cpu;
  // The fastest the FMA chains ran at any probe so far: probes run before, between and after the other measurements,
  // so the compute ceiling is taken at the machine's quietest moment of the run, as the points are.
  double peak_gflops = 0;
  // One call of the peak kernel on this run's device, and the FLOP it does.
  std::function<void()> peak_call;
  double peak_flop_per_call = 0;
  CallTimer timer;  // the steady_clock stopwatch on the CPU, CUDA events on the GPU (work only enqueues): as `backend`
  // Untimed, before every timed call: the arrays' device flushes them from the caches while it is in use.
  std::function<void()> before_timed_call;

  void progress(const std::string& what) { plan.start(what); }
  // Times `work` with one warm-up call and the run's repeats, stopping early once timed calls took a second.
  TimingStats time(const std::function<void()>& work) const;
  // The same with at least kCeilingRepeats timed calls: a ceiling is the fastest call, and the more calls, the likelier
  // one of them ran while other programs left the cores alone.
  TimingStats time_ceiling(const std::function<void()>& work) const;
  TimingStats time_with(const std::function<void()>& work, int timed_calls) const;
};

// A RoofPoint from a kernel's counted FLOP and bytes and its timing (median and fastest call).
RoofPoint roof_point(std::string id, std::string label, std::string name, double flop, double bytes,
                     const TimingStats& t, std::string traffic);

// One probe of the compute ceiling: run.peak_call (independent FMA chains on every thread or SM, a few milliseconds
// per call); raises run.peak_gflops to its fastest call's GFLOP/s.
void probe_fma_peak(RooflineRun& run);
// Sets run.peak_call to the CPU's FMA chains on run.threads threads.
void use_cpu_peak_kernel(RooflineRun& run);

// STREAM copy, scale (y = 2x), add and triad on arrays of `array_bytes` each, then the intensity sweep and the row
// softmax on the same arrays; fills m.stream_kernels, the stream_* rates, y2x, m.sweep_points, and softmax into
// m.roof_points.
void measure_streams_and_sweep(RooflineRun& run, std::int64_t array_bytes, RooflineMeasured& m);

// STREAM alone, measured as the roof's bandwidth is (two passes of the four kernels, each kernel's faster pass) on
// three arrays of `array_bytes`: fills m.stream_kernels, the stream_* rates and m.bandwidth_gbps (pick_bandwidth). Nine
// progress parts (the filling, then each kernel of each pass). For lessons that compare a bandwidth with the roof's.
void measure_stream(RooflineRun& run, std::int64_t array_bytes, RooflineMeasured& m);
inline constexpr int kStreamProgressParts = 9;
// The roof's bandwidth: the fastest of the STREAM kernels in m.stream_kernels, into m.bandwidth_gbps and its kernel.
void pick_bandwidth(RooflineMeasured& m);

// The decode GEMV's matrix: bf16 weights as large as the STREAM arrays (`rows` x d, each row filled from its own
// seed), the input from kDecodeInputSeed; a few hundred rows of y against the double reference, relative to the size
// of their sums of |w x|; and its point on the roof.
inline constexpr std::uint32_t kDecodeInputSeed = 22;
std::int64_t decode_rows(const RooflineRun& run, std::int64_t d);
void fill_decode_weights(std::uint16_t* w, std::int64_t rows, std::int64_t d);
double sampled_gemv_bf16_error(const std::uint16_t* w, const float* x, const float* y, std::int64_t rows,
                               std::int64_t d);
RoofPoint decode_point(std::int64_t rows, std::int64_t d, const TimingStats& t, double max_rel_err);

// |c_ij - sum_l a_il b_lj| / sum_l |a_il| |b_lj| at a few hundred sampled entries of C = A B.
double sampled_matmul_error(const matmul::Shape& s, const float* a, const float* b, const float* c);
// The prefill GEMM's point: C = A B with `tokens` = s.m rows of activations against s.k x s.n fp32 weights, its
// error at sampled entries.
RoofPoint prefill_point(const matmul::Shape& s, const TimingStats& t, const float* a, const float* b, const float* c);

// The lab's other kernels placed on the roof: matmul three ways, standard and flash attention, a decode GEMV and a
// prefill GEMM; appended to m.roof_points.
void measure_placed_kernels(RooflineRun& run, RooflineMeasured& m);

// Matmul naive, tiled and BLAS (cuBLAS on a GPU) at gemm_n on the run's backend, against a double reference.
void measure_matmuls(RooflineRun& run, RooflineMeasured& m);

// The same on a GPU: the peak kernel, the CUDA matmuls, attention, GEMV and a cuBLAS prefill GEMM; and launches
// back to back against a CUDA Graph's replay (series overhead_call and overhead_pool), and a launch waited for.
void use_gpu_peak_kernel(RooflineRun& run);
void measure_placed_kernels_gpu(RooflineRun& run, RooflineMeasured& m);
void measure_overhead_gpu(RooflineRun& run, RunResult& result, RooflineMeasured& m);

// Time per call of y = 2x on tiny arrays, on this thread and handed to the worker pool: series overhead_call and
// overhead_pool, and the floors.
void measure_overhead(RooflineRun& run, RunResult& result, RooflineMeasured& m);

}  // namespace dlsys::roofline
