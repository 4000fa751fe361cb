#include "lessons/matmul/matmul_lesson.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <thread>

#include "engine/host_buffer.h"
#include "engine/measure.h"
#include "engine/units.h"
#include "kernels/common/seeded_fill.h"
#include "kernels/matmul/ladder.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/matmul_devices.h"
#include "lessons/common/cpu_threads_param.h"
#include "lessons/common/run_budget.h"
#include "lessons/common/run_plan.h"
#include "lessons/common/run_time_limit.h"
#include "lessons/matmul/matmul_steps.h"
#include "lessons/matmul/matmul_values.h"

namespace dlsys {

namespace {

using matmul::MatmulMeasured;
using matmul::MatmulTheory;
using matmul::VariantMeasure;

using matmul::MatmulParams;

// The kernels of the parameters' `impl` choice on `device`.
std::vector<matmul::DeviceKernel> selected_kernels(const MatmulParams& p, const matmul::MatmulDevice& device) {
  return device.kernels([&](std::string_view key) { return p.selects(key); });
}

void fill_random(HostBuffer<float>& buffer, unsigned seed) {
  fill_seeded_uniform({buffer.data(), buffer.size()}, seed);
}

double variant_gflops_per_thread(const matmul::DeviceKernel& v) {
  const std::string& key = v.key;
  return key == "naive" ? kNaiveLoopGflopsPerThread : key == "tiled" ? kTiledLoopGflopsPerThread : kBlasGflopsPerThread;
}

// Every variant runs at least twice per shape (a warm-up and one timed call) on the sweep's n x n x n shapes and the
// chosen m x n x k; the double reference runs once, on one thread.
double cpu_seconds_estimate(const MatmulParams& p) {
  const matmul::Shape& shape = p.shape;
  const int threads = std::min(p.threads, describe_cpu().threads);
  double flop_per_call = 2.0 * shape.m * shape.n * shape.k;
  for (double n : p.sizes) flop_per_call += 2.0 * n * n * n;
  double seconds = matmul::reference_is_sampled(shape)
                       ? 0.0
                       : estimated_seconds(2.0 * shape.m * shape.n * shape.k, kNaiveLoopGflopsPerThread, 1);
  for (const matmul::DeviceKernel& v :
       selected_kernels(p, *matmul::make_matmul_device(BackendKind::Cpu, threads, kMatmulTheoryTile, {})))
    seconds += estimated_seconds(2 * flop_per_call, variant_gflops_per_thread(v), threads);
  return seconds;
}

std::string cpu_work_text(const MatmulParams& p) {
  const matmul::Shape& shape = p.shape;
  return fmt::format(
      "2 m n k FLOP per call with m, n, k = {}, {}, {} and the sweep's sizes, twice per variant, at "
      "{:g} GFLOP/s per thread for the naive loop, {:g} tiled, {:g} OpenBLAS, on {} threads",
      shape.m, shape.n, shape.k, kNaiveLoopGflopsPerThread, kTiledLoopGflopsPerThread, kBlasGflopsPerThread,
      std::min(p.threads, describe_cpu().threads));
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

MatmulParams MatmulLesson::read_params(const ParamValues& values) const {
  return {.shape = {values.integer("m"), values.integer("n"), values.integer("k")},
          .sizes = values.list("sizes"),
          .impl = static_cast<matmul::Impl>(choice_index(values, "impl", matmul::kImplChoices)),
          .repeats = static_cast<int>(values.integer("repeats")),
          .threads = static_cast<int>(values.integer("threads")),
          .max_minutes = values.real("max_minutes")};
}

RunBudget MatmulLesson::budget_of(const MatmulParams& p, BackendKind backend) const {
  // Sizes that cannot fit are refused before anything is allocated: A, B, C in fp32 and the double reference.
  const matmul::Shape& shape = p.shape;
  RunBudget budget;
  budget.host_bytes = 4.0 * (shape.m * shape.k + shape.k * shape.n + shape.m * shape.n) + 8.0 * shape.m * shape.n;
  for (double s : p.sizes) budget.host_bytes = std::max(budget.host_bytes, 4.0 * 3 * s * s);
  budget.sizes = "parameters 'm', 'n', 'k' and 'sizes' (the matrices)";
  if (backend != BackendKind::Cpu) return budget;  // the estimate is of the CPU's kernels
  budget.cpu_seconds = cpu_seconds_estimate(p);
  budget.max_minutes = p.max_minutes;
  budget.cpu_work = cpu_work_text(p);
  budget.smaller = "m, n, k, sizes or impl";
  return budget;
}

// The closed forms for the parameters' m x n x k (no device peak: that comes with a run).
MatmulTheory MatmulLesson::theory_of(const MatmulParams& p) const {
  const matmul::Shape& s = p.shape;
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
  const MatmulParams& params;
  const matmul::MatmulDevice& device;
  std::vector<matmul::DeviceKernel> kernels;
  int repeats = 0;
  // One part per kernel at each size of the sweep and at the chosen shape, and one for the reference.
  RunPlan plan;
};

// One shape's operands, filled once from fixed seeds and placed on the device once: every kernel is timed on the
// same numbers, and the sweep does not pay for a fill and an upload per kernel.
class ShapeOperands {
 public:
  ShapeOperands(MatmulRun& run, const matmul::Shape& shape, unsigned seed_a, unsigned seed_b)
      : repeats_(run.repeats),
        a_(run.ctx.ledger, "operands", shape.m * shape.k),
        b_(run.ctx.ledger, "operands", shape.k * shape.n),
        c_(run.ctx.ledger, "output", shape.m * shape.n) {
    fill_random(a_, seed_a);
    fill_random(b_, seed_b);
    on_device_ = run.device.operands(shape, a_.data(), b_.data(), c_.data());
  }

  // Times `kernel` (one warm-up, then the run's repeats); with `fetch_output` its product ends up in output().
  TimingStats time(const matmul::DeviceKernel& kernel, bool fetch_output) {
    // At least 20 ms of timed calls per point: the sweep's slopes come from each size's fastest call.
    const MeasureOptions options{.warmup = 1, .repeats = repeats_, .max_total_us = 1e6, .min_total_us = 2e4};
    return on_device_->time(kernel, options, fetch_output);
  }
  std::optional<matmul::WarpTile> tuned_warp_tile() { return on_device_->tuned_warp_tile(); }
  const float* a() const { return a_.data(); }
  const float* b() const { return b_.data(); }
  const float* output() const { return c_.data(); }

 private:
  int repeats_;
  HostBuffer<float> a_, b_, c_;
  std::unique_ptr<matmul::ShapeOperands> on_device_;
};

// On a GPU the sweep leaves a kernel out of the larger sizes once one call would take longer than this (its time at
// the previous size scaled by the n^3 law): the slowest rungs would otherwise take most of the run.
constexpr double kGpuLongestCallUs = 1e5;

struct SlopeFit {
  double slope = 0;
  double from_n = 0;
};

// The log-log slope over the sizes whose fastest call took at least `min_us` (the two largest sizes when fewer than
// two did): the fastest call of each size is the one least slowed down by other programs.
SlopeFit fit_cubic_regime(const std::vector<SeriesPoint>& fastest, double min_us) {
  std::vector<double> xs, ys;
  for (const SeriesPoint& p : fastest)
    if (p.y >= min_us) {
      xs.push_back(p.x);
      ys.push_back(p.y);
    }
  if (xs.size() < 2) {
    xs.clear();
    ys.clear();
    for (std::size_t i = fastest.size() < 2 ? 0 : fastest.size() - 2; i < fastest.size(); ++i) {
      xs.push_back(fastest[i].x);
      ys.push_back(fastest[i].y);
    }
  }
  return {fit_log_log_slope(xs, ys), xs.empty() ? 0.0 : xs.front()};
}

// On a GPU, a slope still far from 3 means even the largest sizes were too short for that kernel to show n^3 (or it
// was left out of them): say which, so nobody reads the launch cost as the law.
std::optional<std::string> launch_slope_caveat(const matmul::MatmulDevice& device, const MatmulMeasured& measured) {
  if (!device.calls_are_launches()) return std::nullopt;
  std::string far;
  for (const VariantMeasure& v : measured.variants)
    if (std::fabs(v.slope - 3.0) > 0.5) far += fmt::format("{}{} {:.2f}", far.empty() ? "" : ", ", v.key, v.slope);
  if (far.empty()) return std::nullopt;
  return fmt::format(
      "Some fitted slopes are far from 3 ({}): those kernels' calls at the sweep's sizes are short enough that a "
      "launch and the wait for its result weigh as much as the arithmetic; larger sizes show n^3",
      far);
}

// Time against n for n x n x n, one series per kernel, and each kernel's fitted log-log slope.
void run_sweep(MatmulRun& run, RunResult& result, MatmulMeasured& measured) {
  const auto& sizes = run.params.sizes;
  const std::size_t count = run.kernels.size();
  std::vector<Series> times(count);
  std::vector<std::vector<SeriesPoint>> fastest(count);  // (n, fastest time): the sample least slowed by others
  std::vector<int> timed_calls_min(count, run.repeats);
  std::vector<std::string> left_out(count), wrong_points;
  for (std::size_t i = 0; i < count; ++i) {
    const matmul::DeviceKernel& k = run.kernels[i];
    times[i] = Series{
        k.key + "_time", fmt::format("{} ({})", k.key, k.kernel), "measured", "n (m = n = k)", "", "time", "us", {}};
  }
  for (double size : sizes) {
    const matmul::Shape sq{std::int64_t(size), std::int64_t(size), std::int64_t(size)};
    ShapeOperands operands(run, sq, 1, 2);
    for (std::size_t i = 0; i < count; ++i) {
      const matmul::DeviceKernel& k = run.kernels[i];
      std::vector<SeriesPoint>& points = times[i].points;
      if (run.device.calls_are_launches() && !points.empty() &&
          points.back().y * std::pow(size / points.back().x, 3.0) > kGpuLongestCallUs) {
        left_out[i] += fmt::format("{}{:g}", left_out[i].empty() ? "" : ", ", size);
        run.plan.skip();
        continue;
      }
      run.plan.start(fmt::format("{} at n = {}", k.key, size));
      const TimingStats t = operands.time(k, true);
      // Every point is checked, not only the chosen shape: sampled entries of C against double dot products.
      const double err = matmul::sampled_max_relative_error(sq, operands.a(), operands.b(), operands.output(),
                                                            matmul::kReferenceSamples);
      if (!(err <= matmul::error_tolerance(k.precision, sq))) {
        measured.wrong = 1;
        wrong_points.push_back(fmt::format("{} at n = {:g} (error {:.2g})", k.key, size, err));
      }
      points.push_back({size, t.median_us, t.min_us, t.max_us});
      fastest[i].push_back({size, t.min_us, t.min_us, t.min_us});
      timed_calls_min[i] = std::min(timed_calls_min[i], t.repeats);
    }
  }
  for (std::size_t i = 0; i < count; ++i) {
    const matmul::DeviceKernel& k = run.kernels[i];
    const SlopeFit fit = fit_cubic_regime(fastest[i], run.device.slope_min_time_us());
    measured.variants.push_back({.key = k.key,
                                 .kernel = k.kernel,
                                 .precision = std::string(matmul::precision_name(k.precision)),
                                 .library = k.library,
                                 .slope = fit.slope,
                                 .slope_from_n = fit.from_n,
                                 .timed_calls_min = timed_calls_min[i]});
    if (!left_out[i].empty()) measured.sweep_left_out.push_back(fmt::format("{}: n = {}", k.key, left_out[i]));
  }
  for (Series& series : times) result.series.push_back(std::move(series));
  if (!wrong_points.empty()) {
    std::string list;
    for (const std::string& w : wrong_points) list += (list.empty() ? "" : "; ") + w;
    result.backend.notes.push_back(fmt::format("wrong results in the sweep, above their error bound: {}", list));
  }
  if (count == 0 || sizes.empty()) return;
  measured.slope_caveat = launch_slope_caveat(run.device, measured);
  // The theory line: time proportional to n^3, drawn through the first kernel's middle point so the slopes compare.
  const std::vector<SeriesPoint>& first = result.series.front().points;
  const SeriesPoint anchor = first[first.size() / 2];
  Series cubic{"cubic_theory", "n^3 (slope 3)", "theory", "n (m = n = k)", "", "time", "us", {}};
  for (double size : sizes) {
    const double t = anchor.y * std::pow(size / anchor.x, 3.0);
    cubic.points.push_back({size, t, t, t});
  }
  // The same sweep as achieved GFLOP/s, 2 n^3 / time (the whiskers swap: the slowest run is the lowest rate).
  std::vector<Series> rates;
  for (std::size_t i = 0; i < count; ++i) {
    const Series& time = result.series[i];
    Series rate{run.kernels[i].key + "_gflops", time.name, "measured", time.x_label, "", "GFLOP/s", "", {}};
    for (const SeriesPoint& p : time.points) {
      const double flop = 2.0 * p.x * p.x * p.x;
      rate.points.push_back({p.x, flop / (p.y * 1e3), flop / (p.y_max * 1e3), flop / (p.y_min * 1e3)});
    }
    rates.push_back(std::move(rate));
  }
  result.series.push_back(std::move(cubic));
  for (Series& rate : rates) result.series.push_back(std::move(rate));
}

// The library kernel of a precision among the measured ones, or nullptr.
const VariantMeasure* library_of(const MatmulMeasured& measured, const std::string& precision) {
  for (const VariantMeasure& v : measured.variants)
    if (v.library && v.precision == precision) return &v;
  return nullptr;
}

// The chosen shape: each kernel's rate, its share of the library in its precision, its traffic and place on the
// roofline, and its error against the double reference (sampled where the full reference would take minutes).
void run_chosen_shape(MatmulRun& run, const DeviceInfo& device, double bandwidth_gbps, MatmulMeasured& measured) {
  const matmul::Shape shape = run.params.shape;
  ShapeOperands operands(run, shape, 3, 4);
  const bool sampled = matmul::reference_is_sampled(shape);
  measured.reference_samples = sampled ? matmul::kReferenceSamples : 0;
  std::optional<HostBuffer<double>> ref;
  if (!sampled) {
    ref.emplace(run.ctx.ledger, "reference", shape.m * shape.n);
    run.plan.start("double-precision reference");
    matmul::reference(shape, operands.a(), operands.b(), ref->data());
  } else {
    run.plan.start(fmt::format("double-precision reference: {} sampled entries", matmul::kReferenceSamples));
  }
  for (VariantMeasure& m : measured.variants) {
    const matmul::DeviceKernel& k = run.kernels[std::size_t(&m - measured.variants.data())];
    run.plan.start(fmt::format("{} at {} x {} x {}", k.key, shape.m, shape.n, shape.k));
    const TimingStats t = operands.time(k, true);
    matmul::WarpTile warp_tile = matmul::kWarpTiles[matmul::kLessonWarpTile];
    const std::optional<matmul::WarpTile> tuned =
        k.rung == matmul::Rung::WarpTiled ? operands.tuned_warp_tile() : std::nullopt;
    if (tuned) {
      warp_tile = *tuned;
      // The label names the tile shape that won; the note under the view says how it was chosen.
      m.kernel = fmt::format("{} ({})", k.kernel, matmul::warp_tile_name(warp_tile));
      m.autotuned = true;
    }
    m.gflops = matmul::flops(shape) / (t.median_us * 1e3);
    m.time_us = t.median_us;
    m.time_min_us = t.min_us;
    m.time_max_us = t.max_us;
    const bool fp32 = k.precision == matmul::Precision::Fp32;
    m.percent_of_peak = fp32 && device.peak_fp32_gflops > 0 ? 100.0 * m.gflops / device.peak_fp32_gflops : 0.0;
    m.bytes_moved = run.device.bytes(k, shape, warp_tile);
    m.intensity = matmul::intensity(matmul::flops(shape), m.bytes_moved);
    m.memory_roof_gflops = bandwidth_gbps * m.intensity;
    m.traffic = run.device.traffic(k);
    m.max_rel_err = sampled
                        ? matmul::sampled_max_relative_error(shape, operands.a(), operands.b(), operands.output(),
                                                             matmul::kReferenceSamples)
                        : matmul::max_relative_error(shape, operands.a(), operands.b(), operands.output(), ref->data());
    m.error_tolerance = matmul::error_tolerance(k.precision, shape);
    if (!(m.max_rel_err <= m.error_tolerance)) measured.wrong = 1;
    if (fp32) measured.max_rel_err = std::max(measured.max_rel_err, m.max_rel_err);
  }
  for (VariantMeasure& m : measured.variants)
    if (const VariantMeasure* library = library_of(measured, m.precision))
      m.percent_of_library = 100.0 * m.gflops / library->gflops;
  for (const VariantMeasure& m : measured.variants)
    if (m.precision == "fp32" && !m.library && m.percent_of_library > measured.best_fp32_percent_of_blas) {
      measured.best_fp32_key = m.key;
      measured.best_fp32_percent_of_blas = m.percent_of_library;
    }
  const VariantMeasure *naive = measured.variant("naive"), *tiled = measured.variant("tiled"),
                       *blas = measured.variant("blas");
  if (tiled && blas) measured.tiled_percent_of_blas = 100.0 * tiled->gflops / blas->gflops;
  if (tiled && naive) measured.tiled_speedup_over_naive = tiled->gflops / naive->gflops;
  measured.error_tolerance = matmul::error_tolerance(shape);
}

// The roofline of the chosen shape: the fp32 roof min(peak, bandwidth x intensity) as theory, and each kernel as one
// measured point at its intensity. Only with both ceilings known.
void add_roofline(RunResult& result, const MatmulMeasured& measured, const DeviceInfo& device) {
  const double peak = device.peak_fp32_gflops, bandwidth = measured.roof_bandwidth_gbps.value_or(0);
  if (peak <= 0 || bandwidth <= 0) return;
  Series roof{"roof_fp32", "fp32 roof", "theory", "arithmetic intensity", "FLOP/B", "GFLOP/s", "", {}};
  for (double x = 0.125; x <= 8192; x *= 4) {
    const double y = std::min(peak, bandwidth * x);
    roof.points.push_back({x, y, y, y});
  }
  const double ridge = peak / bandwidth;  // where the slope meets the flat roof: drawn exactly
  roof.points.push_back({ridge, peak, peak, peak});
  std::sort(roof.points.begin(), roof.points.end(),
            [](const SeriesPoint& a, const SeriesPoint& b) { return a.x < b.x; });
  result.series.push_back(std::move(roof));
  for (const VariantMeasure& v : measured.variants) {
    const double flop = v.gflops * v.time_us * 1e3;
    result.series.push_back(
        Series{v.key + "_roof",
               fmt::format("{} ({})", v.key, v.precision),
               "measured",
               "arithmetic intensity",
               "FLOP/B",
               "GFLOP/s",
               "",
               {{v.intensity, v.gflops, flop / (v.time_max_us * 1e3), flop / (v.time_min_us * 1e3)}}});
  }
}

// Says where the measurement is not what the parameters asked for or what the peak line suggests: fewer timed calls
// than asked, sizes left out, and fp32 rates above the peak.
void add_measurement_notes(RunResult& result, const MatmulMeasured& measured, int repeats, const DeviceInfo& device) {
  for (const VariantMeasure& v : measured.variants)
    if (v.timed_calls_min < repeats)
      result.backend.notes.push_back(
          fmt::format("{}: the largest sizes got {} timed call{} instead of {}: a size stops after one second of "
                      "timed calls",
                      v.key, v.timed_calls_min, v.timed_calls_min == 1 ? "" : "s", repeats));
  if (!measured.sweep_left_out.empty()) {
    std::string list;
    for (const std::string& s : measured.sweep_left_out) list += (list.empty() ? "" : "; ") + s;
    result.backend.notes.push_back(
        fmt::format("left out of the sweep's larger sizes, where one call would take over {:g} s: {}",
                    kGpuLongestCallUs / 1e6, list));
  }
  for (const VariantMeasure& v : measured.variants)
    if (v.autotuned)
      result.backend.notes.push_back(fmt::format(
          "{}: its tile shape is autotuned, the fastest of {} at each size on this device, as vendor libraries "
          "choose among theirs",
          v.key, matmul::kWarpTiles.size()));
  if (measured.reference_samples > 0)
    result.backend.notes.push_back(fmt::format(
        "errors at the chosen shape are sampled: {} entries of C (its corners among them) against a double dot "
        "product each; the full double reference would take minutes on one thread",
        measured.reference_samples));
  const double peak = device.peak_fp32_gflops;
  if (peak <= 0) return;
  for (const VariantMeasure& v : measured.variants) {
    if (v.precision != "fp32") continue;  // the tensor cores are not under the fp32 peak
    const Series* rates = result.find_series(v.key + "_gflops");
    double best = v.gflops, at_n = 0;
    for (const SeriesPoint& p : rates ? rates->points : std::vector<SeriesPoint>{})
      if (p.y > best) best = p.y, at_n = p.x;
    if (best <= peak) continue;
    const std::string limit =
        device.nominal_fp32_gflops > best
            ? fmt::format("the hardware's limit is nearer the nominal {:.0f} GFLOP/s", device.nominal_fp32_gflops)
        : device.nominal_fp32_gflops > 0
            ? fmt::format("and above the nominal {:.0f} GFLOP/s too: the cores ran faster than the clock it assumes",
                          device.nominal_fp32_gflops)
            : "not the hardware's limit";
    result.backend.notes.push_back(fmt::format(
        "{} reached {:.0f} GFLOP/s{}, above the measured peak of {:.0f}: that peak is the best one library reached on "
        "one size (a busy machine slows it), {}",
        v.key, best, at_n > 0 ? fmt::format(" at n = {:g}", at_n) : "", peak, limit));
  }
}

}  // namespace

RunResult MatmulLesson::run_with(const MatmulParams& p, RunContext& ctx) const {
  RunResult result = begin_result(*this, ctx);
  const auto on = matmul::make_matmul_device(ctx.backend, p.threads, kMatmulTheoryTile,
                                             [&control = ctx.control] { control.check_cancelled(); });
  std::vector<matmul::DeviceKernel> kernels = selected_kernels(p, *on);
  const double parts = double(kernels.size()) * double(p.sizes.size() + 1) + 1;
  MatmulRun run{.ctx = ctx,
                .params = p,
                .device = *on,
                .kernels = std::move(kernels),
                .repeats = p.repeats,
                .plan = RunPlan(ctx.control, parts)};
  const DeviceInfo& device = on->info();
  MatmulTheory theory = theory_of(p);
  theory.peak_gflops = device.peak_fp32_gflops;
  theory.peak_source = device.peaks_source;
  theory.nominal_peak_gflops = device.nominal_fp32_gflops;
  theory.nominal_peak_source = device.nominal_source;
  result.theory = make_values(std::move(theory));
  result.backend.repeats = run.repeats;
  result.backend.timer = on->timer();
  if (ctx.backend == BackendKind::Cpu && p.threads > device.threads)
    result.backend.notes.push_back(fmt::format("{} threads time-share {} hardware threads", p.threads, device.threads));

  MatmulMeasured measured;
  // The roof's bandwidth: the better of a probe before the sweep and one after it, so a burst of other work during
  // either cannot lower the roof under the kernels.
  const double bandwidth_before_gbps = on->roof_bandwidth_gbps();
  run_sweep(run, result, measured);
  measured.roof_bandwidth_gbps = std::max(bandwidth_before_gbps, on->roof_bandwidth_gbps());
  measured.roof_bandwidth_source = on->roof_bandwidth_source();
  run_chosen_shape(run, device, *measured.roof_bandwidth_gbps, measured);
  add_roofline(result, measured, device);
  add_measurement_notes(result, measured, run.repeats, device);
  result.measured = make_values(std::move(measured));
  run.plan.finish();
  finish_result(result, ctx.ledger);
  return result;
}

std::shared_ptr<const matmul::MatmulSteps> MatmulLesson::step_data_of(const MatmulParams& p) const {
  return matmul::make_steps(p.shape, kMatmulTheoryTile);
}

}  // namespace dlsys
