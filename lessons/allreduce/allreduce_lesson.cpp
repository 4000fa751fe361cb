#include "lessons/allreduce/allreduce_lesson.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/host_memory.h"
#include "engine/units.h"
#include "kernels/collectives/cost_model.h"
#include "lessons/allreduce/allreduce_steps.h"
#include "lessons/allreduce/bench.h"

namespace dlsys {

using collectives::Algorithm;
using collectives::CollectiveCost;
using collectives::Op;

namespace {

Op op_of(const ParamValues& p) {
  const std::string& op = p.text("op");
  return op == "reduce_scatter" ? Op::ReduceScatter : op == "all_gather" ? Op::AllGather : Op::AllReduce;
}

// The library (NCCL) runs a ring too; the model's counts are the ring's.
Algorithm model_algorithm_of(const ParamValues& p) {
  return p.text("algo") == "naive" ? Algorithm::Naive : Algorithm::Ring;
}

CollectiveCost cost_of(const ParamValues& p, double bytes) {
  return collectives::collective_cost(op_of(p), model_algorithm_of(p), int(p.integer("n")), bytes);
}

double max_size_bytes(const ParamValues& p) {
  double largest = p.real("bytes");
  for (double s : p.list("sizes")) largest = std::max(largest, s);
  return largest;
}

void add_point(Series& series, double x, double y, double y_min, double y_max) {
  series.points.push_back({x, y, y_min, y_max});
}

}  // namespace

std::vector<ParamSpec> AllreduceLesson::params() const {
  const double max_bytes = 16.0 * kBytesPerGiB;  // the memory check refuses what does not fit before allocating
  return {
      {.key = "n",
       .label = "ranks N",
       .type = ParamType::Integer,
       .default_text = "4",
       .min = 1,
       .max = 64,
       .help = "data-parallel workers: CPU threads, or GPUs"},
      {.key = "bytes",
       .label = "message size S",
       .type = ParamType::Bytes,
       .default_text = "16MiB",
       .min = 4,
       .max = max_bytes,
       .unit = "bytes",
       .help = "bytes per rank (float32), e.g. 64MiB"},
      {.key = "algo",
       .label = "algorithm",
       .type = ParamType::Choice,
       .default_text = "ring",
       .choices = {"ring", "naive", "library"},
       .help = "naive = reduce to rank 0 then broadcast; library = NCCL (GPUs)"},
      {.key = "op",
       .label = "collective",
       .type = ParamType::Choice,
       .default_text = "allreduce",
       .choices = {"allreduce", "reduce_scatter", "all_gather"}},
      {.key = "sizes",
       .label = "sweep sizes",
       .type = ParamType::SizeList,
       .default_text = "1KiB..16MiB",
       .min = 4,
       .max = max_bytes,
       .unit = "bytes",
       .help = "message sizes for busbw against size (doubling with a..b)"},
      {.key = "repeats",
       .label = "timed repeats",
       .type = ParamType::Integer,
       .default_text = "5",
       .min = 1,
       .max = 100,
       .help = "median of this many samples per size"},
      {.key = "segment",
       .label = "pipeline segment",
       .type = ParamType::Bytes,
       .default_text = "256KiB",
       .min = 64,
       .max = 64.0 * 1048576,
       .unit = "bytes",
       .help = "messages travel in segments of this size, so reducing one overlaps sending the next"},
  };
}

namespace {

allreduce::BenchConfig bench_config(const ParamValues& p) {
  allreduce::BenchConfig config{op_of(p),
                                p.text("algo"),
                                static_cast<int>(p.integer("n")),
                                static_cast<std::int64_t>(max_size_bytes(p)),
                                static_cast<std::int64_t>(p.real("segment")),
                                static_cast<int>(p.integer("repeats")),
                                {}};
  for (double size : p.list("sizes")) config.message_bytes.push_back(static_cast<std::int64_t>(size));
  config.message_bytes.push_back(static_cast<std::int64_t>(p.real("bytes")));
  return config;
}

void check_cpu_bench(const allreduce::BenchConfig& config) {
  if (config.algo == "library")
    throw BadInput(
        fmt::format("parameter 'algo': value 'library' is not allowed on the cpu backend (the library is "
                    "NCCL, which runs on GPUs; CUDA here: {}); allowed on cpu: ring, naive",
                    cuda_status().available ? "available, pass --backend cuda" : cuda_status().reason));
  const HostMemory host = host_memory();
  const double needed = double(allreduce::cpu_bench_bytes(config, describe_cpu().threads));
  if (!host.fits(needed))
    throw BadInput(
        fmt::format("parameters 'n' = {} and 'bytes'/'sizes' up to {}: the run needs {} (a send and a recv "
                    "buffer per rank, links, copy probe) but only {} of host memory is available; "
                    "lower n, bytes or sizes",
                    config.n_ranks, format_bytes_binary(double(config.max_bytes)), format_bytes_both(needed),
                    format_bytes_both(host.free_bytes)));
}

}  // namespace

void AllreduceLesson::validate(const ParamValues& p, BackendKind backend) const {
  const auto whole_floats = [](const std::string& key, const std::string& text, double bytes) {
    if (std::fmod(bytes, 4.0) != 0)
      throw BadInput(
          fmt::format("parameter '{}': value '{}' is not allowed ({} bytes is not a whole number of float32 "
                      "elements); allowed: a multiple of 4 bytes",
                      key, text, format_number(bytes, 12)));
  };
  whole_floats("bytes", p.text("bytes"), p.real("bytes"));
  for (double s : p.list("sizes")) whole_floats("sizes", p.text("sizes"), s);
  whole_floats("segment", p.text("segment"), p.real("segment"));
  // What a backend cannot run, or what would not fit, is refused here, before any buffer is made.
  if (backend == BackendKind::Cuda)
    allreduce::check_gpu_bench(bench_config(p));
  else
    check_cpu_bench(bench_config(p));
}

allreduce::AllreduceTheory allreduce_theory(const ParamValues& p) {
  const double bytes = p.real("bytes");
  const CollectiveCost c = cost_of(p, bytes);
  return {.steps = c.steps,
          .bytes_sent_per_rank = c.bytes_sent_per_rank,
          .busbw_factor = c.busbw_factor,
          .model_bytes = c.model_bytes,
          .count = bytes / 4,
          .chunk_bytes = bytes / double(p.integer("n"))};
}

std::shared_ptr<const LessonValues> AllreduceLesson::theory(const ParamValues& p) const {
  return make_values(allreduce_theory(p));
}

std::shared_ptr<const StepData> AllreduceLesson::step_data(const ParamValues& p) const {
  return allreduce::make_steps(p, cost_of(p, p.real("bytes")));
}

namespace {

double algbw_gbps(double bytes, double us) { return us > 0 ? bytes / (us * 1e3) : 0.0; }

// The alpha-beta model, fitted to the sweep and the chosen size; notes say when the fit is degenerate.
collectives::AlphaBetaFit fit_model(const ParamValues& p, const std::vector<allreduce::SizePoint>& points,
                                    std::vector<std::string>& notes) {
  std::vector<CollectiveCost> costs;
  std::vector<double> times;
  for (const auto& point : points) {
    costs.push_back(cost_of(p, point.bytes));
    times.push_back(point.time.median_us);
  }
  const collectives::AlphaBetaFit fit = collectives::fit_alpha_beta(costs, times);
  if (!fit.valid)
    notes.push_back(
        "alpha-beta fit: the measured times do not grow with the bytes sent (at these sizes latency and timing "
        "noise dominate), so no model is fitted; sweep larger sizes to see the bandwidth term");
  if (fit.valid && fit.alpha_forced_zero)
    notes.push_back(
        "alpha-beta fit: the free fit gave a negative latency (or had one size only), so "
        "alpha is fixed at 0 and only beta is fitted");
  return fit;
}

allreduce::AllreduceMeasured measured_at(const allreduce::SizePoint& main,
                                         const std::vector<allreduce::SizePoint>& sweep,
                                         const allreduce::Ceiling& ceiling, const collectives::AlphaBetaFit& fit,
                                         double factor) {
  const double busbw = factor * algbw_gbps(main.bytes, main.time.median_us);
  allreduce::AllreduceMeasured m{
      .time_us = main.time.median_us,
      .time_min_us = main.time.min_us,
      .time_max_us = main.time.max_us,
      .algbw_gbps = algbw_gbps(main.bytes, main.time.median_us),
      .busbw_gbps = busbw,
      .wrong = main.wrong,
      .ceiling_gbps = ceiling.gbps,
      .busbw_fraction_of_ceiling = ceiling.gbps > 0 ? busbw / ceiling.gbps : 0.0,
      .calls_per_sample = main.calls_per_sample,
      .ceiling_figures = ceiling.figures,
  };
  if (fit.valid) m.fit = allreduce::AlphaBeta{fit.alpha_us, fit.beta_gbps};
  for (const auto& point : sweep) m.sweep_wrong += point.wrong;
  if (main.bytes_sent_max_rank >= 0) m.bytes_sent_max_rank = main.bytes_sent_max_rank;
  return m;
}

// Busbw against size (measured, whiskers from the fastest and slowest sample), the fitted model, the ceiling; time
// against size; wrong elements per size (the table's #wrong column).
std::vector<Series> sweep_series(const ParamValues& p, const std::vector<allreduce::SizePoint>& sweep,
                                 const allreduce::Ceiling& bench_ceiling, const collectives::AlphaBetaFit& fit,
                                 double factor) {
  auto series = [](const char* id, const char* name, const char* role, const char* y_label, const char* y_unit) {
    return Series{id, name, role, "message size", "bytes", y_label, y_unit, {}};
  };
  Series busbw_measured = series("busbw_measured", "busbw (measured)", "measured", "bus bandwidth", "GB/s");
  Series busbw_model = series("busbw_fit", "alpha-beta model (fit)", "theory", "bus bandwidth", "GB/s");
  Series ceiling = series("copy_ceiling", "copy ceiling (measured)", "measured", "bus bandwidth", "GB/s");
  Series time_measured = series("time_measured", "time (measured)", "measured", "time", "us");
  Series time_model = series("time_fit", "alpha-beta time (fit)", "theory", "time", "us");
  Series wrong = series("wrong_elements", "wrong elements (measured)", "measured", "wrong elements", "");
  for (const auto& point : sweep) {
    const double x = point.bytes;
    add_point(busbw_measured, x, factor * algbw_gbps(x, point.time.median_us),
              factor * algbw_gbps(x, point.time.max_us), factor * algbw_gbps(x, point.time.min_us));
    add_point(ceiling, x, bench_ceiling.gbps, bench_ceiling.gbps, bench_ceiling.gbps);
    add_point(time_measured, x, point.time.median_us, point.time.min_us, point.time.max_us);
    add_point(wrong, x, double(point.wrong), double(point.wrong), double(point.wrong));
    if (fit.valid) {
      const double t = collectives::model_time_us(cost_of(p, x), fit.alpha_us, fit.beta_gbps);
      const double b = factor * algbw_gbps(x, t);
      add_point(busbw_model, x, b, b, b);
      add_point(time_model, x, t, t, t);
    }
  }
  std::vector<Series> out;
  for (Series* s : {&busbw_measured, &busbw_model, &ceiling, &time_measured, &time_model, &wrong})
    if (!s->points.empty()) out.push_back(std::move(*s));
  return out;
}

}  // namespace

RunResult AllreduceLesson::run(RunContext& ctx) const {
  const ParamValues& p = ctx.params;
  const int n = static_cast<int>(p.integer("n"));
  const bool on_gpu = ctx.backend == BackendKind::Cuda;
  const allreduce::BenchConfig config = bench_config(p);
  RunResult result = begin_result(*this, ctx);
  allreduce::Bench bench = on_gpu ? allreduce::make_gpu_bench(config, ctx.control)
                                  : allreduce::make_cpu_bench(config, ctx.ledger, ctx.control);
  result.backend.emulated = bench.emulated;
  result.backend.timer = bench.timer;
  result.backend.repeats = config.repeats;
  result.backend.notes = bench.notes;
  if (n == 1)
    result.backend.notes.push_back(
        "N = 1: busbw is 0 by definition (the factor 2(N-1)/N or (N-1)/N is 0): no byte crosses a "
        "link, the time is only the local copy from send to recv buffer");
  if (p.text("algo") == "naive")
    result.backend.notes.push_back(
        "busbw uses the collective's factor whatever the algorithm (as nccl-tests does), "
        "so the naive way's lower busbw shows its extra traffic through rank 0");

  // The sweep, then the chosen size, each checked for wrong elements.
  const auto& sizes = p.list("sizes");
  const double total_tasks = double(sizes.size()) + 1;
  std::vector<allreduce::SizePoint> sweep;
  for (double size : sizes) {
    ctx.control.progress(sweep.size() / total_tasks, fmt::format("{} at {}", p.text("op"), format_bytes_binary(size)));
    sweep.push_back(bench.measure(static_cast<std::int64_t>(size)));
  }
  ctx.control.progress(sweep.size() / total_tasks,
                       fmt::format("{} at {}", p.text("op"), format_bytes_binary(p.real("bytes"))));
  const allreduce::SizePoint main = bench.measure(static_cast<std::int64_t>(p.real("bytes")));

  std::vector<allreduce::SizePoint> fitted = sweep;
  fitted.push_back(main);
  const collectives::AlphaBetaFit fit = fit_model(p, fitted, result.backend.notes);
  const double factor = collectives::busbw_factor(op_of(p), n);
  result.measured = make_values(measured_at(main, sweep, bench.ceiling, fit, factor));
  result.series = sweep_series(p, sweep, bench.ceiling, fit, factor);
  ctx.control.progress(1.0, "done");
  finish_result(result, ctx.ledger);
  return result;
}

}  // namespace dlsys
