#include "lessons/roofline/roofline_lesson.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/backend.h"
#include "engine/host_memory.h"
#include "engine/units.h"
#include "kernels/attention/tile_math.h"
#include "kernels/common/cache_flush.h"
#include "kernels/common/device_buffer.h"
#include "kernels/roofline/roofline_math.h"
#include "lessons/common/cpu_threads_param.h"
#include "lessons/common/repeats_param.h"
#include "lessons/common/run_time_limit.h"
#include "lessons/roofline/last_level_cache.h"
#include "lessons/roofline/roofline_measure.h"
#include "lessons/roofline/roofline_measure_common.h"
#include "lessons/roofline/roofline_steps.h"

namespace dlsys {

using roofline::RooflineMeasured;
using roofline::RooflineTheory;
using roofline::RoofPoint;

std::vector<ParamSpec> RooflineLesson::params() const {
  return {
      {.key = "k",
       .label = "FMAs per element (sweep)",
       .type = ParamType::SizeList,
       .default_text = "1..256",
       .min = 1,
       .max = 1024,
       .help = "the intensity sweep's multiply-adds per element: intensity k / 4 FLOP per byte"},
      {.key = "bytes",
       .label = "array size",
       .type = ParamType::Bytes,
       .default_text = "512MiB",
       .min = 1024 * 1024,
       .max = 64.0 * 1024 * 1024 * 1024,
       .help = "each array of STREAM, the sweep and softmax, and the decode weights; far larger than the last-level "
               "cache measures memory"},
      {.key = "gemm_n",
       .label = "matmul size n",
       .type = ParamType::Integer,
       .default_text = "512",
       .min = 16,
       .max = 4096,
       .help = "n x n x n for the naive, tiled and OpenBLAS products placed on the roof"},
      {.key = "attention_n",
       .label = "attention length n",
       .type = ParamType::Integer,
       .default_text = "1024",
       .min = 16,
       .max = 16384,
       .help = "sequence length of standard and flash attention (one head, d = 64)"},
      {.key = "model_dim",
       .label = "model width d",
       .type = ParamType::Integer,
       .default_text = "4096",
       .min = 16,
       .max = 32768,
       .help = "columns of the decode GEMV's weights (as many rows as fill 'bytes' in bf16); the prefill GEMM's d x d"},
      {.key = "prompt_tokens",
       .label = "prefill tokens",
       .type = ParamType::Integer,
       .default_text = "128",
       .min = 1,
       .max = 8192,
       .help = "rows of the prefill GEMM (decode is one token)"},
      {.key = "tiny_sizes",
       .label = "tiny call sizes",
       .type = ParamType::SizeList,
       .default_text = "1..65536",
       .min = 1,
       .max = 1 << 20,
       .unit = "elements",
       .help = "elements of y = 2x per call for the overhead floor"},
      repeats_param("timed calls per measurement, after one warm-up"),
      cpu_threads_param("for every kernel alike"),
      max_minutes_param(),
  };
}

namespace roofline {

RooflineParams read_roofline_params(const ParamValues& values) {
  RooflineParams p;
  for (double k : values.list("k")) p.k.push_back(std::int64_t(k));
  p.bytes = values.integer("bytes");
  p.gemm_n = values.integer("gemm_n");
  p.attention_n = values.integer("attention_n");
  p.model_dim = values.integer("model_dim");
  p.prompt_tokens = values.integer("prompt_tokens");
  for (double size : values.list("tiny_sizes")) p.tiny_sizes.push_back(std::int64_t(size));
  p.repeats = static_cast<int>(values.integer("repeats"));
  p.threads = static_cast<int>(values.integer("threads"));
  p.max_minutes = values.real("max_minutes");
  return p;
}

}  // namespace roofline

namespace {

using roofline::RooflineParams;

// Bytes the run holds at its largest stage: the three STREAM arrays, matmul with its double reference, attention
// with n x n scores, or the decode and prefill weights.
double largest_stage_bytes(const RooflineParams& p) {
  const double arrays = 3.0 * double(p.bytes);
  const double n = double(p.gemm_n);
  const double matmul = 3 * 4 * n * n + 8 * n * n;
  const double an = double(p.attention_n), d = 64;
  const double attention = 4 * 4 * an * d + 8 * an * d + 4 * an * an;
  const double dm = double(p.model_dim), tokens = double(p.prompt_tokens);
  const double decode = double(p.bytes) + 8 * dm + 4 * double(p.bytes) / (2 * dm);
  const double prefill = 4 * (2 * tokens * dm + dm * dm);
  return std::max({arrays, matmul, attention, decode, prefill});
}

// CPU seconds the run needs at least: every timed call and its warm-up, the references, at the rates run_time_limit.h
// uses for loops and libraries, and memory-bound passes at 1 GB/s.
double cpu_seconds_estimate(const RooflineParams& p, int threads) {
  const double calls = 1.0 + double(p.repeats);
  const double elements = double(p.bytes) / 4;
  double sweep_flop = 0;
  for (std::int64_t k : p.k) sweep_flop += roofline::family_flop_per_element(k) * elements;
  const double n = double(p.gemm_n), an = double(p.attention_n);
  const double dm = double(p.model_dim), tokens = double(p.prompt_tokens);
  double s = estimated_seconds(calls * sweep_flop, kTiledLoopGflopsPerThread, threads);
  s += estimated_seconds(2 * n * n * n, kNaiveLoopGflopsPerThread, 1);                       // matmul reference
  s += estimated_seconds(calls * 2 * n * n * n, kNaiveLoopGflopsPerThread, threads);         // naive matmul
  s += estimated_seconds(3 * calls * 4 * an * an * 64, kNaiveLoopGflopsPerThread, threads);  // attention x 3
  s += estimated_seconds(calls * 2 * tokens * dm * dm, kBlasGflopsPerThread, threads);       // prefill
  s += calls * 12.0 * elements * 4 * 6 / 1e9;                                                // STREAM, softmax, GEMV
  return s;
}

}  // namespace

RooflineParams RooflineLesson::read_params(const ParamValues& values) const {
  return roofline::read_roofline_params(values);
}

RunBudget RooflineLesson::budget_of(const RooflineParams& p, BackendKind backend) const {
  const int threads = std::min(p.threads, describe_cpu().threads);
  RunBudget budget;
  budget.host_bytes = largest_stage_bytes(p);
  // On a GPU each stage's arrays live in device memory too (the host keeps copies to check the outputs against).
  if (backend == BackendKind::Cuda) budget.device_bytes = budget.host_bytes;
  budget.cpu_seconds = cpu_seconds_estimate(p, threads);
  budget.max_minutes = p.max_minutes;
  budget.sizes = "parameter 'bytes' (or gemm_n, attention_n, model_dim)";
  budget.cpu_work = fmt::format(
      "the sweep's 2 k FLOP per element over {} elements, matmul, attention and prefill FLOP, and memory passes at 1 "
      "GB/s, on {} threads",
      p.bytes / 4, threads);
  budget.smaller = "k, bytes, gemm_n, attention_n, model_dim or prompt_tokens";
  return budget;
}

RooflineTheory RooflineLesson::theory_of(const RooflineParams& p) const {
  RooflineTheory t;
  // The course's numbers (002 section 9.2.1), exactly as it states them.
  t.a100_bandwidth_bytes_per_s = 1.5e12;
  t.a100_fp32_gflops = 19.5e3;
  t.a100_floats_per_s = t.a100_bandwidth_bytes_per_s / 4;
  t.a100_y2x_bytes_per_element = 4 + 4;
  t.a100_y2x_elements_per_s = t.a100_bandwidth_bytes_per_s / t.a100_y2x_bytes_per_element;
  t.a100_y2x_gflops = t.a100_y2x_elements_per_s * 1 / 1e9;
  t.a100_y2x_percent_of_compute = 100 * t.a100_y2x_gflops / t.a100_fp32_gflops;
  t.a100_fp32_ridge_flop_per_byte =
      roofline::ridge_flop_per_byte(t.a100_fp32_gflops, t.a100_bandwidth_bytes_per_s / 1e9);
  // The course's hypothetical GPU (002 section 9.2): 300 TFLOP/s, 1 TB/s, a kernel at 50 FLOP per byte.
  t.example_peak_gflops = 300e3;
  t.example_bandwidth_gbps = 1e3;
  t.example_ridge_flop_per_byte = roofline::ridge_flop_per_byte(t.example_peak_gflops, t.example_bandwidth_gbps);
  t.example_intensity_flop_per_byte = 50;
  t.example_attainable_gflops =
      roofline::attainable_gflops(t.example_peak_gflops, t.example_bandwidth_gbps, t.example_intensity_flop_per_byte);
  for (std::int64_t k : p.k) t.sweep_intensity.push_back(roofline::family_intensity(k));
  return t;
}

std::shared_ptr<const roofline::RooflineSteps> RooflineLesson::step_data_of(const RooflineParams& p) const {
  return roofline::make_steps(p, theory_of(p));
}

void place_on_roof(RooflineMeasured& m) {
  m.worst_percent_above_roof = -INFINITY;
  m.max_rel_err = 0;
  m.wrong = 0;
  auto place = [&](RoofPoint& p) {
    p.roof_gflops = roofline::attainable_gflops(m.peak_gflops, m.bandwidth_gbps, p.intensity);
    p.percent_of_roof = 100 * p.gflops / p.roof_gflops;
    if (p.percent_of_roof - 100 > m.worst_percent_above_roof) {
      m.worst_percent_above_roof = p.percent_of_roof - 100;
      m.worst_point = p.name;
    }
    m.max_rel_err = std::max(m.max_rel_err, p.max_rel_err);
    if (!(p.max_rel_err <= p.error_tolerance)) m.wrong = 1;
  };
  for (RoofPoint& p : m.sweep_points) place(p);
  for (RoofPoint& p : m.roof_points) place(p);
  if (!m.sweep_points.empty()) {
    const RoofPoint& lowest =
        *std::min_element(m.sweep_points.begin(), m.sweep_points.end(),
                          [](const RoofPoint& a, const RoofPoint& b) { return a.intensity < b.intensity; });
    m.sweep_bandwidth_gbps = lowest.gflops_best / lowest.intensity;
    for (const RoofPoint& p : m.sweep_points) m.sweep_plateau_gflops = std::max(m.sweep_plateau_gflops, p.gflops_best);
    m.sweep_ridge_flop_per_byte = m.sweep_plateau_gflops / m.sweep_bandwidth_gbps;
    const double ridge = roofline::ridge_flop_per_byte(m.peak_gflops, m.bandwidth_gbps);
    m.ridge_ratio = m.sweep_ridge_flop_per_byte / ridge;
    auto distance = [&](const RoofPoint& p) { return std::fabs(std::log(p.intensity / ridge)); };
    for (std::size_t i = 0; i < m.sweep_points.size(); ++i)
      if (distance(m.sweep_points[i]) < distance(m.sweep_points[std::size_t(m.sweep_nearest_ridge)]))
        m.sweep_nearest_ridge = static_cast<int>(i);
    double highest = 0;
    for (const RoofPoint& p : m.sweep_points) highest = std::max(highest, p.intensity);
    m.sweep_crosses_ridge = lowest.intensity < ridge && highest > ridge;
  }
  m.roof_bar_met = m.worst_percent_above_roof <= kRoofTolerancePercent;
  m.ridge_bar_met = m.sweep_crosses_ridge && m.ridge_ratio >= 1 / kRidgeFactor && m.ridge_ratio <= kRidgeFactor;
}

namespace {

Series roof_series(const std::string& id, const std::string& name, double peak, double bandwidth) {
  const roofline::RoofCurve curve = roofline::roof_curve(name, peak, bandwidth, 1.0 / 32, 512);
  return Series{id, name, "theory", "arithmetic intensity", "FLOP/B", "attainable", "GFLOP/s", curve.points};
}

Series point_series(const std::string& id, const std::string& name, const std::vector<RoofPoint>& points) {
  Series s{id, name, "measured", "arithmetic intensity", "FLOP/B", "measured", "GFLOP/s", {}};
  for (const RoofPoint& p : points) s.points.push_back({p.intensity, p.gflops, p.gflops_slowest, p.gflops_best});
  return s;
}

// The roofs (measured, and with the datasheet-style peak), the sweep, each placed kernel alone, and the line the
// overhead step compares tiny calls with: the time their bytes take at the measured bandwidth.
void add_roof_series(RunResult& result, const RooflineMeasured& m, const RooflineTheory& t) {
  result.series.push_back(roof_series("roof", "measured roof", m.peak_gflops, m.bandwidth_gbps));
  if (t.datasheet_peak_gflops)
    result.series.push_back(
        roof_series("roof_datasheet", t.datasheet_bandwidth_gbps ? "datasheet roof" : "datasheet-style roof",
                    *t.datasheet_peak_gflops, t.datasheet_bandwidth_gbps.value_or(m.bandwidth_gbps)));
  result.series.push_back(point_series("sweep", "k FMAs per element (sweep)", m.sweep_points));
  for (const RoofPoint& p : m.roof_points) result.series.push_back(point_series("kernel_" + p.id, p.label, {p}));
  if (const Series* call = result.find_series("overhead_call")) {
    Series bytes{"overhead_bytes",
                 "8 B per element at the measured bandwidth",
                 "theory",
                 "elements",
                 "",
                 "time per call",
                 "us",
                 {}};
    for (const SeriesPoint& p : call->points) {
      const double us = 8.0 * p.x / (m.bandwidth_gbps * 1e3);
      bytes.points.push_back({p.x, us, us, us});
    }
    result.series.push_back(std::move(bytes));
  }
}

void add_notes(RunResult& result, const RooflineParams& p, const RooflineMeasured& m, bool gpu, int threads,
               int hardware) {
  const double llc = last_level_cache_bytes();
  const double array = double(p.bytes);
  // Arrays past the private caches are flushed before each timed call (roof_devices.h): only smaller ones, or a CPU
  // that cannot flush, can be read from the last-level cache.
  const bool flushed = array >= roofline::kStreamingFromBytes && can_evict_from_caches();
  if (!gpu && llc > 0 && array <= llc && !flushed)
    result.backend.notes.push_back(
        fmt::format("arrays of {} fit in the last-level cache ({}): the STREAM bandwidth may read high",
                    format_bytes_binary(array), format_bytes_binary(llc)));
  if (!gpu && threads > hardware)
    result.backend.notes.push_back(fmt::format("{} threads time-share {} hardware threads", threads, hardware));
  if (m.wrong)
    result.backend.notes.push_back("a kernel's output differs from its reference by more than fp32 rounding explains");
}

}  // namespace

RunResult RooflineLesson::run_with(const RooflineParams& p, RunContext& ctx) const {
  RunResult result = begin_result(*this, ctx);
  const bool gpu = ctx.backend == BackendKind::Cuda;
  roofline::RooflineRun run{.ctx = ctx,
                            .params = p,
                            .plan = RunPlan(ctx.control, 24.0 + double(p.k.size() + p.tiny_sizes.size())),
                            .threads = p.threads,
                            .repeats = p.repeats,
                            .backend = ctx.backend,
                            .timer = gpu ? dlsys::cuda::cuda_event_timer() : CallTimer{}};
  const DeviceInfo& device = gpu ? cuda_status().device : cpu_with_peaks();
  RooflineTheory theory = theory_of(p);
  if (gpu && device.peak_fp32_gflops > 0) {
    theory.datasheet_peak_gflops = device.peak_fp32_gflops;
    theory.datasheet_bandwidth_gbps = device.peak_bandwidth_gbps;
    theory.datasheet_source = device.peaks_source;
  } else if (!gpu && device.nominal_fp32_gflops > 0) {
    theory.datasheet_peak_gflops = device.nominal_fp32_gflops;
    theory.datasheet_source = device.nominal_source;
  }
  result.backend.repeats = run.repeats;
  result.backend.timer = run.timer.name;

  RooflineMeasured m;
  if (!gpu) m.sgemm_peak_gflops = device.peak_fp32_gflops;
  gpu ? roofline::use_gpu_peak_kernel(run) : roofline::use_cpu_peak_kernel(run);
  run.progress("compute ceiling: independent FMA chains");
  roofline::probe_fma_peak(run);
  roofline::measure_streams_and_sweep(run, p.bytes, m);
  roofline::probe_fma_peak(run);
  if (gpu) {
    roofline::measure_placed_kernels_gpu(run, m);
    roofline::measure_overhead_gpu(run, result, m);
  } else {
    roofline::measure_placed_kernels(run, m);
    roofline::measure_overhead(run, result, m);
  }
  roofline::probe_fma_peak(run);
  m.peak_gflops = run.peak_gflops;
  roofline::pick_bandwidth(m);
  place_on_roof(m);
  m.floats_per_s = m.bandwidth_gbps * 1e9 / 4;
  m.y2x_elements_per_s = m.bandwidth_gbps * 1e9 / 8;
  m.y2x_predicted_gflops = m.y2x_elements_per_s / 1e9;
  m.y2x_percent_of_peak = 100 * m.y2x_gflops / m.peak_gflops;
  theory.ridge_flop_per_byte = roofline::ridge_flop_per_byte(m.peak_gflops, m.bandwidth_gbps);
  add_roof_series(result, m, theory);
  add_notes(result, p, m, gpu, run.threads, device.threads);
  result.theory = make_values(std::move(theory));
  result.measured = make_values(std::move(m));
  run.plan.finish();
  finish_result(result, ctx.ledger);
  return result;
}

}  // namespace dlsys
