#include "lessons/matmul/matmul_lesson.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <thread>

#include "engine/host_buffer.h"
#include "engine/host_memory.h"
#include "engine/measure.h"
#include "engine/units.h"
#include "kernels/common/seeded_fill.h"
#include "kernels/matmul/backends.h"
#include "kernels/matmul/matmul.h"
#include "lessons/common/cpu_threads_param.h"
#include "lessons/common/run_time_limit.h"
#include "lessons/matmul/matmul_steps.h"
#include "lessons/matmul/matmul_values.h"

namespace dlsys {

namespace {

using Variant = matmul::VariantInfo;
using matmul::MatmulMeasured;
using matmul::MatmulTheory;
using matmul::VariantMeasure;

matmul::Shape shape_of(const ParamValues& p) { return {p.integer("m"), p.integer("n"), p.integer("k")}; }

std::vector<const Variant*> selected_variants(const ParamValues& p) {
  std::vector<const Variant*> out;
  for (const auto& v : matmul::variants())
    if (p.text("impl") == "all" || p.text("impl") == v.key) out.push_back(&v);
  return out;
}

// Runs one variant on one shape and returns its timing; `c` receives the product.
TimingStats time_variant(const Variant& variant, BackendKind backend, const matmul::Shape& shape, const float* a,
                         const float* b, float* c, int threads, int repeats, const RunControl& control) {
  const MeasureOptions options{.warmup = 1, .repeats = repeats, .max_total_us = 1e6};
  return matmul::time_variant(variant, backend, shape, a, b, c, threads, options, [&] { control.check_cancelled(); });
}

void fill_random(HostBuffer<float>& buffer, unsigned seed) {
  fill_seeded_uniform({buffer.data(), buffer.size()}, seed);
}

double variant_gflops_per_thread(const Variant& v) {
  const std::string key(v.key);
  return key == "naive" ? kNaiveLoopGflopsPerThread : key == "tiled" ? kTiledLoopGflopsPerThread : kBlasGflopsPerThread;
}

// Every variant runs at least twice per shape (a warm-up and one timed call) on the sweep's n x n x n shapes and the
// chosen m x n x k; the double reference runs once, on one thread.
double cpu_seconds_estimate(const ParamValues& p, const matmul::Shape& shape) {
  const int threads = std::min<int>(static_cast<int>(p.integer("threads")), describe_cpu().threads);
  double flop_per_call = 2.0 * shape.m * shape.n * shape.k;
  for (double n : p.list("sizes")) flop_per_call += 2.0 * n * n * n;
  double seconds = estimated_seconds(2.0 * shape.m * shape.n * shape.k, kNaiveLoopGflopsPerThread, 1);
  for (const Variant* v : selected_variants(p))
    seconds += estimated_seconds(2 * flop_per_call, variant_gflops_per_thread(*v), threads);
  return seconds;
}

std::string cpu_work_text(const ParamValues& p, const matmul::Shape& shape) {
  return fmt::format(
      "2 m n k FLOP per call with m, n, k = {}, {}, {} and the sweep's sizes, twice per variant, at "
      "{:g} GFLOP/s per thread for the naive loop, {:g} tiled, {:g} OpenBLAS, on {} threads",
      shape.m, shape.n, shape.k, kNaiveLoopGflopsPerThread, kTiledLoopGflopsPerThread, kBlasGflopsPerThread,
      std::min<int>(static_cast<int>(p.integer("threads")), describe_cpu().threads));
}

}  // namespace

std::vector<ParamSpec> MatmulLesson::params() const {
  return {
      {.key = "m",
       .label = "m (rows of A and C)",
       .type = ParamType::Integer,
       .default_text = "512",
       .min = 1,
       .max = 8192,
       .help = "A is m x k"},
      {.key = "n",
       .label = "n (columns of B and C)",
       .type = ParamType::Integer,
       .default_text = "512",
       .min = 1,
       .max = 8192,
       .help = "B is k x n"},
      {.key = "k",
       .label = "k (inner dimension)",
       .type = ParamType::Integer,
       .default_text = "512",
       .min = 1,
       .max = 8192,
       .help = "each c_ij sums k products"},
      {.key = "sizes",
       .label = "sweep sizes (square)",
       .type = ParamType::SizeList,
       .default_text = "64..1024",
       .min = 1,
       .max = 8192,
       .help = "n for the n x n x n sweep"},
      {.key = "impl",
       .label = "implementation",
       .type = ParamType::Choice,
       .default_text = "all",
       .choices = {"all", "naive", "tiled", "blas"}},
      {.key = "repeats",
       .label = "timed repeats",
       .type = ParamType::Integer,
       .default_text = "3",
       .min = 1,
       .max = 100,
       .help = "median of this many, after one warm-up"},
      cpu_threads_param("for every CPU variant alike"),
      max_minutes_param(),
  };
}

void MatmulLesson::validate(const ParamValues& p, BackendKind backend) const {
  // Sizes that cannot fit are refused before anything is allocated: A, B, C in fp32 and the double reference.
  const matmul::Shape shape = shape_of(p);
  double largest_bytes = 4.0 * (shape.m * shape.k + shape.k * shape.n + shape.m * shape.n) + 8.0 * shape.m * shape.n;
  for (double s : p.list("sizes")) largest_bytes = std::max(largest_bytes, 4.0 * 3 * s * s);
  const HostMemory host = host_memory();
  if (!host.fits(largest_bytes))
    throw BadInput(fmt::format("matrices need {} but only {} of host memory is available; lower m, n, k or sizes",
                               format_bytes_both(largest_bytes), format_bytes_both(host.free_bytes)));
  if (backend == BackendKind::Cpu)
    refuse_if_longer_than_limit(p, cpu_seconds_estimate(p, shape), cpu_work_text(p, shape), "m, n, k, sizes or impl");
}

MatmulTheory matmul_theory(const ParamValues& p) {
  const matmul::Shape s = shape_of(p);
  MatmulTheory t;
  t.mults = matmul::multiplications(s);
  t.adds = matmul::additions(s);
  t.flops = matmul::flops(s);
  t.exact_scalar_ops = t.mults + t.adds;
  t.bytes_naive = matmul::bytes_naive(s);
  t.bytes_tiled = matmul::bytes_tiled(s, kMatmulTheoryTile);
  t.bytes_minimum = matmul::bytes_minimum(s);
  t.intensity_naive = matmul::intensity(t.flops, t.bytes_naive);
  t.intensity_tiled = matmul::intensity(t.flops, t.bytes_tiled);
  t.intensity_minimum = matmul::intensity(t.flops, t.bytes_minimum);
  t.tile = kMatmulTheoryTile;
  return t;
}

std::shared_ptr<const LessonValues> MatmulLesson::theory(const ParamValues& p) const {
  return make_values(matmul_theory(p));
}

double fit_log_log_slope(const std::vector<double>& x, const std::vector<double>& y) {
  const std::size_t n = x.size();
  if (n < 2) return std::nan("");
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double lx = std::log(x[i]), ly = std::log(y[i]);
    sx += lx;
    sy += ly;
    sxx += lx * lx;
    sxy += lx * ly;
  }
  const double denominator = n * sxx - sx * sx;
  return denominator == 0 ? std::nan("") : (n * sxy - sx * sy) / denominator;
}

namespace {

struct MatmulRun {
  RunContext& ctx;
  std::vector<const Variant*> variants;
  int threads = 0, repeats = 0;
  double done_tasks = 0, total_tasks = 0;

  void progress(const std::string& what) { ctx.control.progress(done_tasks++ / total_tasks, what); }
  TimingStats time(const Variant& v, const matmul::Shape& shape, const float* a, const float* b, float* c) {
    return time_variant(v, ctx.backend, shape, a, b, c, threads, repeats, ctx.control);
  }
};

// Below about a fifth of a millisecond a call's fixed costs (waking the worker threads, the library's dispatch) are a
// visible part of its time, so the slope of time against n is not yet the n^3 of the arithmetic.
constexpr double kSlopeMinTimeUs = 200;

struct SlopeFit {
  double slope = 0;
  double from_n = 0;
};

// The log-log slope over the sizes whose fastest call took at least kSlopeMinTimeUs (all sizes when fewer than two
// do): the fastest call of each size is the one least slowed down by other programs.
SlopeFit fit_cubic_regime(const std::vector<SeriesPoint>& fastest) {
  std::vector<double> xs, ys;
  for (const SeriesPoint& p : fastest)
    if (p.y >= kSlopeMinTimeUs) {
      xs.push_back(p.x);
      ys.push_back(p.y);
    }
  if (xs.size() < 2) {
    xs.clear();
    ys.clear();
    for (const SeriesPoint& p : fastest) {
      xs.push_back(p.x);
      ys.push_back(p.y);
    }
  }
  return {fit_log_log_slope(xs, ys), xs.empty() ? 0.0 : xs.front()};
}

// On a GPU the default sizes are over in tens of microseconds, so launching a kernel and waiting for it weigh as
// much as the arithmetic and the slopes come out near 1: say so, and which sizes show the n^3 law.
std::optional<std::string> gpu_slope_caveat(BackendKind backend, const MatmulMeasured& measured,
                                            const std::vector<Series>& series, double largest_n) {
  if (backend != BackendKind::Cuda) return std::nullopt;
  std::string slopes;
  bool far = false;
  for (const VariantMeasure& v : measured.variants) {
    far = far || std::fabs(v.slope - 3.0) > 0.5;
    slopes += fmt::format("{}{} {:.2f}", slopes.empty() ? "" : ", ", v.key, v.slope);
  }
  if (!far) return std::nullopt;
  double slowest_us = 0;
  for (const Series& s : series)
    if (!s.points.empty()) slowest_us = std::max(slowest_us, s.points.back().y);
  return fmt::format(
      "The fitted slopes ({}) are far from 3: on this GPU even n = {:.0f} takes about {:.0f} us, where a kernel "
      "launch and the wait for its result cost about as much as the arithmetic, so time hardly grows with n. "
      "Sweep larger products (sizes = 1024..8192) to see n^3",
      slopes, largest_n, slowest_us);
}

// Time against n for n x n x n, one series per variant, and each variant's fitted log-log slope.
void run_sweep(MatmulRun& run, RunResult& result, MatmulMeasured& measured) {
  const auto& sizes = run.ctx.params.list("sizes");
  for (const Variant* v : run.variants) {
    Series series{std::string(v->key) + "_time",
                  fmt::format("{} ({})", v->key, matmul::kernel_name(*v, run.ctx.backend)),
                  "measured",
                  "n (m = n = k)",
                  "",
                  "time",
                  "us",
                  {}};
    std::vector<SeriesPoint> fastest;  // (n, fastest time): the sample least slowed by other programs
    int timed_calls_min = run.repeats;
    for (double size : sizes) {
      run.progress(fmt::format("{} at n = {}", v->key, size));
      const matmul::Shape sq{std::int64_t(size), std::int64_t(size), std::int64_t(size)};
      HostBuffer<float> a(run.ctx.ledger, "operands", sq.m * sq.k), b(run.ctx.ledger, "operands", sq.k * sq.n),
          c(run.ctx.ledger, "output", sq.m * sq.n);
      fill_random(a, 1);
      fill_random(b, 2);
      const TimingStats t = run.time(*v, sq, a.data(), b.data(), c.data());
      series.points.push_back({size, t.median_us, t.min_us, t.max_us});
      fastest.push_back({size, t.min_us, t.min_us, t.min_us});
      timed_calls_min = std::min(timed_calls_min, t.repeats);
    }
    const SlopeFit fit = fit_cubic_regime(fastest);
    measured.variants.push_back({.key = std::string(v->key),
                                 .slope = fit.slope,
                                 .slope_from_n = fit.from_n,
                                 .timed_calls_min = timed_calls_min});
    result.series.push_back(std::move(series));
  }
  if (result.series.empty() || sizes.empty()) return;
  measured.slope_caveat = gpu_slope_caveat(run.ctx.backend, measured, result.series, sizes.back());
  // The theory line: time proportional to n^3, drawn through the first variant's middle point so the slopes compare.
  const SeriesPoint anchor = result.series.front().points[sizes.size() / 2];
  Series cubic{"cubic_theory", "n^3 (slope 3)", "theory", "n (m = n = k)", "", "time", "us", {}};
  for (double size : sizes) {
    const double t = anchor.y * std::pow(size / anchor.x, 3.0);
    cubic.points.push_back({size, t, t, t});
  }
  // The same sweep as achieved GFLOP/s, 2 n^3 / time (the whiskers swap: the slowest run is the lowest rate).
  std::vector<Series> rates;
  for (std::size_t i = 0; i < run.variants.size(); ++i) {
    const Series& time = result.series[i];
    Series rate{
        std::string(run.variants[i]->key) + "_gflops", time.name, "measured", time.x_label, "", "GFLOP/s", "", {}};
    for (const SeriesPoint& p : time.points) {
      const double flop = 2.0 * p.x * p.x * p.x;
      rate.points.push_back({p.x, flop / (p.y * 1e3), flop / (p.y_max * 1e3), flop / (p.y_min * 1e3)});
    }
    rates.push_back(std::move(rate));
  }
  result.series.push_back(std::move(cubic));
  for (Series& rate : rates) result.series.push_back(std::move(rate));
}

// The chosen shape: GFLOP/s of each variant, and its error against the double reference.
void run_chosen_shape(MatmulRun& run, const DeviceInfo& device, MatmulMeasured& measured) {
  const matmul::Shape shape = shape_of(run.ctx.params);
  MemoryLedger& ledger = run.ctx.ledger;
  HostBuffer<float> a(ledger, "operands", shape.m * shape.k), b(ledger, "operands", shape.k * shape.n),
      c(ledger, "output", shape.m * shape.n);
  HostBuffer<double> ref(ledger, "reference", shape.m * shape.n);
  fill_random(a, 3);
  fill_random(b, 4);
  run.progress("double-precision reference");
  matmul::reference(shape, a.data(), b.data(), ref.data());
  for (VariantMeasure& m : measured.variants) {
    const Variant& v = *run.variants[&m - measured.variants.data()];
    run.progress(fmt::format("{} at {} x {} x {}", v.key, shape.m, shape.n, shape.k));
    const TimingStats t = run.time(v, shape, a.data(), b.data(), c.data());
    m.gflops = matmul::flops(shape) / (t.median_us * 1e3);
    m.time_us = t.median_us;
    m.time_min_us = t.min_us;
    m.time_max_us = t.max_us;
    m.percent_of_peak = device.peak_fp32_gflops > 0 ? 100.0 * m.gflops / device.peak_fp32_gflops : 0.0;
    m.max_rel_err = matmul::max_relative_error(shape, a.data(), b.data(), c.data(), ref.data());
    measured.max_rel_err = std::max(measured.max_rel_err, m.max_rel_err);
  }
  const VariantMeasure *naive = measured.variant("naive"), *tiled = measured.variant("tiled"),
                       *blas = measured.variant("blas");
  if (tiled && blas) measured.tiled_percent_of_blas = 100.0 * tiled->gflops / blas->gflops;
  if (tiled && naive) measured.tiled_speedup_over_naive = tiled->gflops / naive->gflops;
  measured.error_tolerance = matmul::error_tolerance(shape);
  measured.wrong = measured.max_rel_err > measured.error_tolerance ? 1 : 0;
}

// Says where the measurement is not what the parameters asked for or what the peak line suggests: fewer timed calls
// than asked, and rates above the measured peak.
void add_measurement_notes(RunResult& result, const MatmulMeasured& measured, int repeats, const DeviceInfo& device) {
  for (const VariantMeasure& v : measured.variants)
    if (v.timed_calls_min < repeats)
      result.backend.notes.push_back(
          fmt::format("{}: the largest sizes got {} timed call{} instead of {}: a size stops after one second of "
                      "timed calls",
                      v.key, v.timed_calls_min, v.timed_calls_min == 1 ? "" : "s", repeats));
  const double peak = device.peak_fp32_gflops;
  if (peak <= 0) return;
  for (const VariantMeasure& v : measured.variants) {
    const Series* rates = result.find_series(v.key + "_gflops");
    double best = v.gflops, at_n = 0;
    for (const SeriesPoint& p : rates ? rates->points : std::vector<SeriesPoint>{})
      if (p.y > best) best = p.y, at_n = p.x;
    if (best <= peak) continue;
    const std::string limit =
        device.nominal_fp32_gflops > 0
            ? fmt::format("the hardware's limit is nearer the nominal {:.0f} GFLOP/s", device.nominal_fp32_gflops)
            : "not the hardware's limit";
    result.backend.notes.push_back(fmt::format(
        "{} reached {:.0f} GFLOP/s{}, above the measured peak of {:.0f}: that peak is the best one library reached on "
        "one size (a busy machine slows it), {}",
        v.key, best, at_n > 0 ? fmt::format(" at n = {:g}", at_n) : "", peak, limit));
  }
}

}  // namespace

RunResult MatmulLesson::run(RunContext& ctx) const {
  const ParamValues& p = ctx.params;
  RunResult result = begin_result(*this, ctx);
  MatmulRun run{.ctx = ctx,
                .variants = selected_variants(p),
                .threads = static_cast<int>(p.integer("threads")),
                .repeats = static_cast<int>(p.integer("repeats"))};
  run.total_tasks = double(run.variants.size()) * (p.list("sizes").size() + 1) + 1;
  const bool on_gpu = ctx.backend == BackendKind::Cuda;

  const DeviceInfo& device = on_gpu ? cuda_status().device : cpu_with_peaks();
  MatmulTheory theory = matmul_theory(p);
  theory.peak_gflops = device.peak_fp32_gflops;
  theory.peak_source = device.peaks_source;
  theory.nominal_peak_gflops = device.nominal_fp32_gflops;
  theory.nominal_peak_source = device.nominal_source;
  result.theory = make_values(std::move(theory));
  result.backend.repeats = run.repeats;
  result.backend.timer = on_gpu ? "cuda_event" : "steady_clock";
  if (!on_gpu && run.threads > device.threads)
    result.backend.notes.push_back(
        fmt::format("{} threads time-share {} hardware threads", run.threads, device.threads));

  MatmulMeasured measured;
  run_sweep(run, result, measured);
  run_chosen_shape(run, device, measured);
  add_measurement_notes(result, measured, run.repeats, device);
  result.measured = make_values(std::move(measured));
  ctx.control.progress(1.0, "done");
  finish_result(result, ctx.ledger);
  return result;
}

std::shared_ptr<const StepData> MatmulLesson::step_data(const ParamValues& params) const {
  return matmul::make_steps(params, kMatmulTheoryTile);
}

}  // namespace dlsys
