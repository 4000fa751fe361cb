#include "lessons/matmul/matmul_lesson.h"

#include <fmt/format.h>

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

namespace dlsys {

namespace {

using Variant = matmul::VariantInfo;

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

nlohmann::ordered_json MatmulLesson::theory(const ParamValues& p) const {
  const matmul::Shape s = shape_of(p);
  nlohmann::ordered_json t;
  t["mults"] = matmul::multiplications(s);
  t["adds"] = matmul::additions(s);
  t["flops"] = matmul::flops(s);
  t["exact_scalar_ops"] = matmul::multiplications(s) + matmul::additions(s);
  t["bytes_naive"] = matmul::bytes_naive(s);
  t["bytes_tiled"] = matmul::bytes_tiled(s, kMatmulTheoryTile);
  t["bytes_minimum"] = matmul::bytes_minimum(s);
  t["intensity_naive"] = matmul::intensity(matmul::flops(s), matmul::bytes_naive(s));
  t["intensity_tiled"] = matmul::intensity(matmul::flops(s), matmul::bytes_tiled(s, kMatmulTheoryTile));
  t["intensity_minimum"] = matmul::intensity(matmul::flops(s), matmul::bytes_minimum(s));
  t["tile"] = kMatmulTheoryTile;
  t["slope"] = 3;
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

RunResult MatmulLesson::run(RunContext& ctx) const {
  const ParamValues& p = ctx.params;
  RunResult result = begin_result(*this, ctx);
  const auto variants = selected_variants(p);
  const int threads = static_cast<int>(p.integer("threads"));
  const int repeats = static_cast<int>(p.integer("repeats"));
  const bool on_gpu = ctx.backend == BackendKind::Cuda;
  const matmul::Shape shape = shape_of(p);
  const auto& sizes = p.list("sizes");

  const DeviceInfo& device = on_gpu ? cuda_status().device : cpu_with_peaks();
  result.theory["peak_gflops"] = device.peak_fp32_gflops;
  result.theory["peak_source"] = device.peaks_source;
  result.backend.repeats = repeats;
  result.backend.timer = on_gpu ? "cuda_event" : "steady_clock";
  if (!on_gpu && threads > device.threads)
    result.backend.notes.push_back(fmt::format("{} threads time-share {} hardware threads", threads, device.threads));

  const double total_tasks = double(variants.size()) * (sizes.size() + 1) + 1;
  double done_tasks = 0;
  auto step_progress = [&](const std::string& what) { ctx.control.progress(done_tasks++ / total_tasks, what); };

  // 1. The sweep: time against n for n x n x n, one series per variant.
  for (const Variant* v : variants) {
    Series series{fmt::format("{} ({})", v->key, matmul::kernel_name(*v, ctx.backend)),
                  "measured",
                  "n (m = n = k)",
                  "",
                  "time",
                  "us",
                  {}};
    std::vector<double> xs, ys;
    for (double size : sizes) {
      step_progress(fmt::format("{} at n = {}", v->key, size));
      const matmul::Shape sq{std::int64_t(size), std::int64_t(size), std::int64_t(size)};
      HostBuffer<float> a(ctx.ledger, "operands", sq.m * sq.k), b(ctx.ledger, "operands", sq.k * sq.n),
          c(ctx.ledger, "output", sq.m * sq.n);
      fill_random(a, 1);
      fill_random(b, 2);
      const TimingStats t =
          time_variant(*v, ctx.backend, sq, a.data(), b.data(), c.data(), threads, repeats, ctx.control);
      series.points.push_back({size, t.median_us, t.min_us, t.max_us});
      xs.push_back(size);
      ys.push_back(t.median_us);
    }
    result.measured[std::string(v->key) + "_slope"] = fit_log_log_slope(xs, ys);
    result.series.push_back(std::move(series));
  }
  // The theory line: time proportional to n^3, drawn through the first variant's middle point so the slopes compare.
  if (!result.series.empty() && !sizes.empty()) {
    const SeriesPoint anchor = result.series.front().points[sizes.size() / 2];
    Series cubic{"n^3 (slope 3)", "theory", "n (m = n = k)", "", "time", "us", {}};
    for (double size : sizes) {
      const double t = anchor.y * std::pow(size / anchor.x, 3.0);
      cubic.points.push_back({size, t, t, t});
    }
    result.series.push_back(std::move(cubic));
  }

  // 2. The chosen shape: GFLOP/s of each variant, and its error against the double reference.
  HostBuffer<float> a(ctx.ledger, "operands", shape.m * shape.k), b(ctx.ledger, "operands", shape.k * shape.n),
      c(ctx.ledger, "output", shape.m * shape.n);
  HostBuffer<double> ref(ctx.ledger, "reference", shape.m * shape.n);
  fill_random(a, 3);
  fill_random(b, 4);
  step_progress("double-precision reference");
  matmul::reference(shape, a.data(), b.data(), ref.data());
  double worst_error = 0;
  for (const Variant* v : variants) {
    step_progress(fmt::format("{} at {} x {} x {}", v->key, shape.m, shape.n, shape.k));
    const TimingStats t =
        time_variant(*v, ctx.backend, shape, a.data(), b.data(), c.data(), threads, repeats, ctx.control);
    const double gflops = matmul::flops(shape) / (t.median_us * 1e3);
    const double error = matmul::max_relative_error(shape, a.data(), b.data(), c.data(), ref.data());
    worst_error = std::max(worst_error, error);
    const std::string key(v->key);
    result.measured[key + "_gflops"] = gflops;
    result.measured[key + "_time_us"] = t.median_us;
    result.measured[key + "_time_min_us"] = t.min_us;
    result.measured[key + "_time_max_us"] = t.max_us;
    result.measured[key + "_percent_of_peak"] =
        device.peak_fp32_gflops > 0 ? 100.0 * gflops / device.peak_fp32_gflops : 0.0;
    result.measured[key + "_max_rel_err"] = error;
  }
  if (result.measured.contains("tiled_gflops") && result.measured.contains("blas_gflops"))
    result.measured["tiled_percent_of_blas"] =
        100.0 * result.measured["tiled_gflops"].get<double>() / result.measured["blas_gflops"].get<double>();
  result.measured["max_rel_err"] = worst_error;
  result.measured["error_tolerance"] = matmul::error_tolerance(shape);
  result.measured["wrong"] = worst_error > matmul::error_tolerance(shape) ? 1 : 0;
  ctx.control.progress(1.0, "done");
  finish_result(result, ctx.ledger);
  return result;
}

std::shared_ptr<const StepData> MatmulLesson::step_data(const ParamValues& params) const {
  return matmul::make_steps(params, kMatmulTheoryTile);
}

}  // namespace dlsys
