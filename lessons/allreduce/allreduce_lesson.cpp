#include "lessons/allreduce/allreduce_lesson.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>

#include "engine/host_memory.h"
#include "engine/units.h"
#include "kernels/collectives/cost_model.h"
#include "lessons/allreduce/algorithm_comparison.h"
#include "lessons/allreduce/allreduce_measured.h"
#include "lessons/allreduce/allreduce_steps.h"
#include "lessons/allreduce/bench.h"
#include "lessons/allreduce/mpi_run.h"
#include "lessons/allreduce/mpi_values.h"
#include "lessons/common/run_plan.h"
#include "lessons/common/run_time_limit.h"

namespace dlsys {

using collectives::Algorithm;
using collectives::CollectiveCost;
using collectives::Op;

using allreduce::Algo;
using allreduce::AllreduceParams;

namespace {

// The library (NCCL) runs a ring too; the model's counts are the ring's.
Algorithm model_algorithm_of(const AllreduceParams& p) { return lab_algorithm(p.algo).value_or(Algorithm::Ring); }

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
       .choices = allreduce::kAlgoChoices,
       .help = "naive = reduce to rank 0 then broadcast; library = NCCL (GPUs); recursive_doubling, rabenseifner, "
               "direct = over a link per pair (CPU, all-reduce, N <= 8)"},
      {.key = "op",
       .label = "collective",
       .type = ParamType::Choice,
       .default_text = "allreduce",
       .choices = allreduce::kOpChoices},
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
      launcher_param("(n is then the number of processes: leave it out, or give that number)"),
      max_minutes_param(),
  };
}

AllreduceParams AllreduceLesson::read_params(const ParamValues& values) const {
  AllreduceParams p;
  p.n = int(values.integer("n"));
  p.n_text = values.text("n");
  p.bytes = values.real("bytes");
  p.bytes_text = values.text("bytes");
  p.algo = static_cast<Algo>(choice_index(values, "algo", allreduce::kAlgoChoices));
  p.op = static_cast<Op>(choice_index(values, "op", allreduce::kOpChoices));
  p.sizes = values.list("sizes");
  p.sizes_text = values.text("sizes");
  p.repeats = int(values.integer("repeats"));
  p.segment_bytes = values.real("segment");
  p.segment_text = values.text("segment");
  p.launcher = static_cast<Launcher>(choice_index(values, "launcher", kLauncherChoices));
  p.max_minutes = values.real("max_minutes");
  return p;
}

namespace {

allreduce::BenchConfig bench_config(const AllreduceParams& p) {
  allreduce::BenchConfig config{.op = p.op,
                                .algo = p.algo,
                                .n_ranks = p.n,
                                .max_bytes = static_cast<std::int64_t>(p.max_size_bytes()),
                                .segment_bytes = static_cast<std::int64_t>(p.segment_bytes),
                                .repeats = p.repeats,
                                .message_bytes = {}};
  for (double size : p.sizes) config.message_bytes.push_back(static_cast<std::int64_t>(size));
  config.message_bytes.push_back(static_cast<std::int64_t>(p.bytes));
  return config;
}

// The crossbar algorithms: all-reduce only, and at most kComparisonMaxRanks ranks (N(N-1) links).
void check_crossbar_algorithm(const allreduce::BenchConfig& config) {
  if (!is_crossbar(config.algo)) return;
  if (config.op != Op::AllReduce)
    throw BadInput(fmt::format("parameter 'op': value '{}' is not allowed with algo '{}'; allowed: allreduce",
                               collectives::op_name(config.op), algo_name(config.algo)));
  if (config.n_ranks > allreduce::kComparisonMaxRanks)
    throw BadInput(fmt::format(
        "parameter 'n': value '{}' is not allowed with algo '{}' (a link between every pair of ranks); allowed: "
        "an integer from 1 to {}",
        config.n_ranks, algo_name(config.algo), allreduce::kComparisonMaxRanks));
}

void check_cpu_bench(const allreduce::BenchConfig& config) {
  check_crossbar_algorithm(config);
  if (config.algo == Algo::Library)
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

// Seconds a CPU run takes, from the bytes it moves: every size is timed (after a warm-up call) and probed for its
// copy ceiling, each call passing about N x S through the ranks' memory at an effective 2 GB/s (ranks that share two
// cores copy and reduce in turns); the comparison repeats the sweep once per other all-reduce algorithm; and every
// sample costs about a millisecond whatever its size (small sizes are timed as batches of calls).
constexpr double kCpuRankBytesPerSecond = 2e9;
constexpr double kCpuSampleSeconds = 1e-3;
constexpr int kComparedAlgorithms = 5;  // ring, naive, recursive doubling, Rabenseifner, direct

double cpu_run_seconds(const allreduce::BenchConfig& config, bool compares) {
  const double samples_per_size = config.repeats + 1.0;
  double chosen_bytes = 0, sweep_bytes = 0;
  for (std::size_t i = 0; i < config.message_bytes.size(); ++i) {
    chosen_bytes += double(config.message_bytes[i]);
    if (i + 1 < config.message_bytes.size()) sweep_bytes += double(config.message_bytes[i]);
  }
  const double sizes = double(config.message_bytes.size());
  const double others = compares ? kComparedAlgorithms - 1 : 0;
  const double bytes = config.n_ranks * samples_per_size * (2 * chosen_bytes + others * sweep_bytes);
  return bytes / kCpuRankBytesPerSecond + samples_per_size * (2 * sizes + others * (sizes - 1)) * kCpuSampleSeconds;
}

// Every all-reduce at the sweep's sizes on the same ranks and links (the chosen algorithm's sweep is reused).
void compare_algorithms(const AllreduceParams& p, const allreduce::Bench& bench, const allreduce::RunPoints& points,
                        allreduce::RunSummary& summary, RunContext& ctx, RunPlan& plan) {
  if (!bench.measure_algorithm) {
    summary.measured.comparison_skipped =
        ctx.backend == BackendKind::Cuda
            ? "The comparison of algorithms runs on the CPU backend only (pass --backend cpu)."
        : p.op != Op::AllReduce
            ? "The comparison of algorithms runs for op allreduce only."
            : fmt::format("The comparison of algorithms runs for N up to {} (a link between every pair of ranks).",
                          allreduce::kComparisonMaxRanks);
    return;
  }
  const auto chosen = lab_algorithm(p.algo);
  std::vector<allreduce::AlgorithmPoints> runs;
  for (Algorithm algorithm : allreduce::kComparedAlgorithms) {
    allreduce::AlgorithmPoints run{algorithm, {}};
    if (chosen == algorithm) {
      run.sweep = points.sweep;
    } else {
      for (double size : p.sizes) {
        plan.start(
            fmt::format("comparison: {} at {}", collectives::algorithm_name(algorithm), format_bytes_binary(size)));
        run.sweep.push_back(bench.measure_algorithm(algorithm, static_cast<std::int64_t>(size)));
      }
    }
    runs.push_back(std::move(run));
  }
  allreduce::AlgorithmComparison comparison = allreduce::summarize_comparison(p.n, runs);
  for (Series& s : allreduce::comparison_series(comparison, p.n)) summary.series.push_back(std::move(s));
  summary.measured.comparison = std::move(comparison);
}

void refuse_unless_whole_floats(const std::string& key, const std::string& text, double bytes) {
  if (std::fmod(bytes, 4.0) != 0)
    throw BadInput(
        fmt::format("parameter '{}': value '{}' is not allowed ({} bytes is not a whole number of float32 "
                    "elements); allowed: a multiple of 4 bytes",
                    key, text, format_number(bytes, 12)));
}

}  // namespace

void AllreduceLesson::check_params(const AllreduceParams& p, BackendKind backend) const {
  refuse_unless_whole_floats("bytes", p.bytes_text, p.bytes);
  for (double s : p.sizes) refuse_unless_whole_floats("sizes", p.sizes_text, s);
  refuse_unless_whole_floats("segment", p.segment_text, p.segment_bytes);
  if (p.launcher == Launcher::Mpi) return allreduce::check_process_run(p, backend);
  // What a backend cannot run, or what would not fit, is refused here, before any buffer is made.
  if (backend == BackendKind::Cuda && is_crossbar(p.algo))
    throw BadInput(fmt::format(
        "parameter 'algo': value '{}' runs on the CPU backend only; allowed on cuda: ring, library (or pass "
        "--backend cpu)",
        algo_name(p.algo)));
  if (backend == BackendKind::Cuda)
    allreduce::check_gpu_bench(bench_config(p));
  else
    check_cpu_bench(bench_config(p));
}

// The time limit holds for ranks as CPU threads; the GPUs' and the processes' runs are not estimated.
RunBudget AllreduceLesson::budget_of(const AllreduceParams& p, BackendKind backend) const {
  if (p.launcher == Launcher::Mpi || backend == BackendKind::Cuda) return {};
  const allreduce::BenchConfig config = bench_config(p);
  const bool compares = allreduce::compares_algorithms(config);
  RunBudget budget;
  budget.cpu_seconds = cpu_run_seconds(config, compares);
  budget.max_minutes = p.max_minutes;
  budget.cpu_work = fmt::format(
      "{} ranks x {} samples of each size, with its copy ceiling{}, at an effective {:g} GB/s per rank", config.n_ranks,
      config.repeats + 1, compares ? " and the other algorithms" : "", kCpuRankBytesPerSecond / 1e9);
  budget.smaller = "n, bytes, sizes or repeats";
  return budget;
}

allreduce::AllreduceTheory allreduce_theory(const AllreduceParams& p) {
  const CollectiveCost c = collectives::collective_cost(p.op, model_algorithm_of(p), p.n, p.bytes);
  return {.steps = c.steps,
          .bytes_sent_per_rank = c.bytes_sent_per_rank,
          .busbw_factor = c.busbw_factor,
          .model_bytes = c.model_bytes,
          .count = p.bytes / 4,
          .chunk_bytes = p.bytes / double(p.n)};
}

allreduce::AllreduceTheory AllreduceLesson::theory_of(const AllreduceParams& p) const { return allreduce_theory(p); }

std::shared_ptr<const allreduce::AllreduceSteps> AllreduceLesson::step_data_of(const AllreduceParams& p) const {
  return allreduce::make_steps(p);
}

std::vector<std::string> AllreduceLesson::process_launch_params(int world_size, bool quick) const {
  return allreduce::process_launch_params(world_size, quick);
}

namespace {

// Where a run of threads or GPUs says what qualifies its numbers before any is measured.
void add_backend_notes(const AllreduceParams& p, const allreduce::Bench& bench, RunResult& result) {
  result.backend.emulated = bench.emulated;
  result.backend.timer = bench.timer;
  result.backend.repeats = p.repeats;
  result.backend.notes = bench.notes;
  if (p.n == 1)
    result.backend.notes.push_back(
        "N = 1: busbw is 0 by definition (the factor 2(N-1)/N or (N-1)/N is 0): no byte crosses a "
        "link, the time is only the local copy from send to recv buffer");
  if (p.algo == Algo::Naive)
    result.backend.notes.push_back(
        "busbw uses the collective's factor whatever the algorithm (as nccl-tests does), "
        "so the naive way's lower busbw shows its extra traffic through rank 0");
}

}  // namespace

RunResult AllreduceLesson::run_with(const AllreduceParams& p, RunContext& ctx) const {
  if (p.launcher == Launcher::Mpi) return allreduce::run_over_processes(*this, p, ctx);
  const allreduce::BenchConfig config = bench_config(p);
  RunResult result = begin_result(*this, ctx);
  allreduce::Bench bench = ctx.backend == BackendKind::Cuda
                               ? allreduce::make_gpu_bench(config, ctx.control)
                               : allreduce::make_cpu_bench(config, ctx.ledger, ctx.control);
  add_backend_notes(p, bench, result);

  // The sweep, then the chosen size, each checked for wrong elements and each with its copy ceiling.
  allreduce::RunPoints points{.op = p.op,
                              .model_algorithm = model_algorithm_of(p),
                              .n_ranks = p.n,
                              .repeats = config.repeats,
                              .hardware_threads = bench.hardware_threads,
                              .sweep = {},
                              .chosen = {}};
  const std::string op = collectives::op_name(p.op);
  // One part per measured size: the sweep, the chosen size, and the other algorithms' sweeps where they are compared.
  const double sizes = double(p.sizes.size());
  const double compared = bench.measure_algorithm ? double(std::size(allreduce::kComparedAlgorithms) - 1) * sizes : 0;
  RunPlan plan(ctx.control, sizes + 1 + compared);
  for (double size : p.sizes) {
    plan.start(fmt::format("{} at {}", op, format_bytes_binary(size)));
    points.sweep.push_back(bench.measure(static_cast<std::int64_t>(size), false));
  }
  plan.start(fmt::format("{} at {}", op, format_bytes_binary(p.bytes)));
  points.chosen = bench.measure(static_cast<std::int64_t>(p.bytes), true);

  allreduce::RunSummary summary = allreduce::summarize_run(points);
  result.backend.notes.insert(result.backend.notes.end(), summary.notes.begin(), summary.notes.end());
  compare_algorithms(p, bench, points, summary, ctx, plan);
  result.measured = make_values(std::move(summary.measured));
  result.series = std::move(summary.series);
  plan.finish();
  finish_result(result, ctx.ledger);
  return result;
}

void AllreduceLesson::read_values(const nlohmann::ordered_json& theory, const nlohmann::ordered_json& measured,
                                  RunResult& result) const {
  if (!(measured.is_object() && measured.contains("launcher")))
    return LessonWithValues::read_values(theory, measured, result);
  result.theory = read_values_section<allreduce::AllreduceTheory>(theory, "theory");
  result.measured = read_values_section<allreduce::AllreduceProcessesMeasured>(measured, "measured");
}

}  // namespace dlsys
