// The data-parallel lesson's run: the chosen configuration on CPU rank threads (its timeline, its split of the step
// time, its bytes), every variant against single-rank training on the full batch, step time against bucket size,
// both ways against N, and the benchmark's configuration.
#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "engine/measure.h"
#include "engine/mpi_world.h"
#include "engine/units.h"
#include "kernels/ddp/ddp_devices.h"
#include "lessons/common/run_plan.h"
#include "lessons/ddp/ddp_lesson.h"
#include "lessons/ddp/ddp_processes.h"

namespace dlsys {

namespace {

using ddp::RankStep;
using ddp::SyncMode;
using ddp::TrainConfig;
using ddp::TrainResult;

// The timed steps of one configuration (the first step is not timed): per step the slowest rank's times, and the
// overlap fraction of all ranks together.
struct Measured {
  TrainConfig config;
  TrainResult result;
  std::vector<double> step_us, compute_us, comm_us, hidden_us, exposed_us, idle_us, overlap;
  double rank0_exposed_us = 0;  // median: what rank 0 waited for communication
  double max_rel_err = 0;
  bool bit_identical = false;
};

double median(std::vector<double> v) { return v.empty() ? 0.0 : summarize_us(std::move(v), "steady_clock").median_us; }

// The timed steps of a trained configuration, summarized, and its weights against the single-rank reference.
Measured measured_from(const TrainConfig& c, TrainResult trained, const std::vector<float>& single) {
  Measured m{c, std::move(trained), {}, {}, {}, {}, {}, {}, {}, 0, 0, false};
  std::vector<double> rank0_exposed;
  for (std::size_t s = 1; s < m.result.steps.size(); ++s) {
    const std::vector<RankStep>& ranks = m.result.steps[s];
    const RankStep& slowest = *std::max_element(ranks.begin(), ranks.end(),
                                                [](const auto& a, const auto& b) { return a.step_us < b.step_us; });
    m.step_us.push_back(slowest.step_us);
    m.compute_us.push_back(slowest.compute_us);
    m.comm_us.push_back(slowest.comm_us);
    m.hidden_us.push_back(slowest.hidden_comm_us);
    m.exposed_us.push_back(slowest.exposed_comm_us);
    m.idle_us.push_back(slowest.idle_us);
    double hidden = 0, comm = 0;
    for (const RankStep& r : ranks) {
      hidden += r.hidden_comm_us;
      comm += r.comm_us;
    }
    m.overlap.push_back(comm > 0 ? hidden / comm : 0.0);
    rank0_exposed.push_back(ranks.front().exposed_comm_us);
  }
  m.rank0_exposed_us = median(rank0_exposed);
  m.max_rel_err = ddp::max_rel_err(m.result.weights, single);
  m.bit_identical = m.result.weights == single;
  return m;
}

// `placement`, where given, receives how the device placed the ranks (on a GPU).
Measured measure(const TrainConfig& c, const training::DataSet& data, const std::vector<float>& single,
                 const ddp::DdpDevice& device, RunContext& ctx, std::string* placement = nullptr) {
  ctx.control.check_cancelled();
  return measured_from(c, device.train(c, data, ctx.ledger, placement), single);
}

// Ranks as processes: every rank trains its share; rank 0 gathers the others' timings and spans, then trains the
// single-rank reference (after the timed steps, so it does not share the cores with them).
Measured measure_processes(const TrainConfig& c, const training::DataSet& data, RunContext& ctx, RunPlan& plan) {
  ctx.control.check_cancelled();
  TrainResult trained = ddp::train_over_processes(c, data, ctx.ledger, ctx.backend);
  std::vector<float> single;
  if (mpi::world()->rank == 0) {
    plan.start("single-rank training on the full batch (the reference, on rank 0)");
    single = ddp::train_single_rank(c, data);
  }
  return measured_from(c, std::move(trained), single);
}

std::string mode_name(SyncMode m) { return m == SyncMode::Ddp ? "ddp" : "dataparallel"; }

ddp::Variant variant_of(const Measured& m, bool chosen) {
  return {mode_name(m.config.mode),
          ddp::wire_name(m.config.wire),
          m.config.accumulate,
          m.config.ranks,
          m.config.mode == SyncMode::Ddp ? m.config.bucket_elements * 4 : 0,
          median(m.step_us),
          m.result.rank0_bytes_sent_per_step,
          m.max_rel_err,
          m.bit_identical,
          chosen};
}

Series series(const char* id, const std::string& name, const char* role, const char* x_label, const char* x_unit,
              const char* y_label, const char* y_unit) {
  return Series{id, name, role, x_label, x_unit, y_label, y_unit, {}};
}

void add_timing(Series& s, double x, const std::vector<double>& samples) {
  const TimingStats t = summarize_us(samples, "steady_clock");
  s.points.push_back({x, t.median_us, t.min_us, t.max_us});
}
void add_value(Series& s, double x, double y) { s.points.push_back({x, y, y, y}); }

bool is_base(const TrainConfig& c) { return c.wire == ddp::WireFormat::Fp32 && c.accumulate == 1; }

// Step time, exposed communication and overlap against bucket size: DDP, fp32, no accumulation, the chosen N.
std::vector<Series> bucket_series(const std::vector<Measured>& all, int ranks) {
  Series step = series("step_vs_bucket", "step (measured)", "measured", "bucket size", "bytes", "time", "us");
  Series exposed =
      series("exposed_vs_bucket", "exposed communication (measured)", "measured", "bucket size", "bytes", "time", "us");
  Series comm =
      series("comm_vs_bucket", "time in all-reduces (measured)", "measured", "bucket size", "bytes", "time", "us");
  Series overlap = series("overlap_vs_bucket", "communication hidden behind backward (measured)", "measured",
                          "bucket size", "bytes", "fraction", "");
  for (const Measured& m : all) {
    if (m.config.mode != SyncMode::Ddp || m.config.ranks != ranks || !is_base(m.config)) continue;
    const double x = double(m.config.bucket_elements * 4);
    add_timing(step, x, m.step_us);
    add_timing(exposed, x, m.exposed_us);
    add_timing(comm, x, m.comm_us);
    add_timing(overlap, x, m.overlap);
  }
  std::vector<Series> out;
  for (Series* s : {&step, &exposed, &comm, &overlap}) {
    std::sort(s->points.begin(), s->points.end(), [](const auto& a, const auto& b) { return a.x < b.x; });
    if (!s->points.empty()) out.push_back(std::move(*s));
  }
  return out;
}

// Against N, both ways, at the chosen bucket: step time, rank 0's wait for communication, rank 0's bytes (sent +
// received) counted and from the closed forms.
std::vector<Series> ranks_series(const std::vector<Measured>& all, const TrainConfig& chosen) {
  Series step_ddp = series("step_vs_n_ddp", "DDP step (measured)", "measured", "ranks N", "", "time", "us");
  Series step_dp = series("step_vs_n_dp", "DataParallel step (measured)", "measured", "ranks N", "", "time", "us");
  Series wait_ddp = series("rank0_wait_vs_n_ddp", "DDP: waiting (measured)", "measured", "ranks N", "", "time", "us");
  Series wait_dp =
      series("rank0_wait_vs_n_dp", "DataParallel: copying (measured)", "measured", "ranks N", "", "time", "us");
  Series bytes_ddp = series("rank0_bytes_vs_n_ddp", "DDP (counted)", "measured", "ranks N", "", "bytes", "bytes");
  Series bytes_dp =
      series("rank0_bytes_vs_n_dp", "DataParallel (counted)", "measured", "ranks N", "", "bytes", "bytes");
  Series theory_ddp =
      series("rank0_bytes_vs_n_ddp_theory", "DDP: 4 (N-1)/N x gradient", "theory", "ranks N", "", "bytes", "bytes");
  Series theory_dp = series("rank0_bytes_vs_n_dp_theory", "DataParallel: (N-1)(2 model + rows/N)", "theory", "ranks N",
                            "", "bytes", "bytes");
  const double grad = double(training::parameter_count(chosen.shape)) * 4;
  const double rows_bytes = 2.0 * chosen.shape.width * chosen.global_batch * 4;
  for (const Measured& m : all) {
    const TrainConfig& c = m.config;
    if (!is_base(c) || (c.mode == SyncMode::Ddp && c.bucket_elements != chosen.bucket_elements)) continue;
    const double n = c.ranks,
                 bytes = double(m.result.rank0_bytes_sent_per_step + m.result.rank0_bytes_received_per_step);
    if (c.mode == SyncMode::Ddp) {
      add_timing(step_ddp, n, m.step_us);
      add_value(wait_ddp, n, m.rank0_exposed_us);
      add_value(bytes_ddp, n, bytes);
      add_value(theory_ddp, n, 4.0 * (n - 1) / n * grad);
    } else {
      add_timing(step_dp, n, m.step_us);
      add_value(wait_dp, n, m.rank0_exposed_us);
      add_value(bytes_dp, n, bytes);
      add_value(theory_dp, n, (n - 1) * (2 * grad + rows_bytes / n));
    }
  }
  std::vector<Series> out;
  for (Series* s : {&step_ddp, &step_dp, &wait_ddp, &wait_dp, &bytes_ddp, &bytes_dp, &theory_ddp, &theory_dp}) {
    std::sort(s->points.begin(), s->points.end(), [](const auto& a, const auto& b) { return a.x < b.x; });
    if (!s->points.empty()) out.push_back(std::move(*s));
  }
  return out;
}

Timeline timeline_of(const Measured& m, const std::string& name) {
  Timeline t;
  t.name = name;
  t.source = "measured";
  t.mode = "concurrent";
  const bool ddp = m.config.mode == SyncMode::Ddp;
  for (int r = 0; r < m.config.ranks; ++r) {
    t.lanes.push_back(ddp ? fmt::format("rank {} compute", r) : fmt::format("rank {}", r));
    if (ddp) t.lanes.push_back(fmt::format("rank {} comm", r));
  }
  for (const ddp::OpSpan& s : m.result.last_step_spans) {
    TimelineSpan span;
    span.lane = ddp ? 2 * s.rank + (s.comm_lane ? 1 : 0) : s.rank;
    span.start = s.start_us;
    span.end = s.end_us;
    span.kind = s.kind;
    span.label = s.label;
    t.spans.push_back(std::move(span));
  }
  return t;
}

std::string bucket_text(const TrainConfig& c) { return format_bytes_both(double(c.bucket_elements * 4)); }

const Measured* find(const std::vector<Measured>& all, int ranks, SyncMode mode, std::int64_t bucket) {
  for (const Measured& m : all)
    if (m.config.ranks == ranks && m.config.mode == mode && is_base(m.config) &&
        (mode == SyncMode::DataParallel || m.config.bucket_elements == bucket))
      return &m;
  return nullptr;
}

ddp::DdpMeasured measured_of(const Measured& chosen, const ddp::DdpTheory& theory, const ddp::DdpDevice& device) {
  ddp::DdpMeasured out;
  const TimingStats step = summarize_us(chosen.step_us, "steady_clock");
  out.step_us = step.median_us;
  out.step_us_min = step.min_us;
  out.step_us_max = step.max_us;
  out.compute_us = median(chosen.compute_us);
  out.comm_us = median(chosen.comm_us);
  out.hidden_comm_us = median(chosen.hidden_us);
  out.exposed_comm_us = median(chosen.exposed_us);
  out.idle_us = median(chosen.idle_us);
  out.overlap_fraction = median(chosen.overlap);
  out.comm_bytes = chosen.result.rank0_bytes_sent_per_step;
  out.comm_bytes_received = chosen.result.rank0_bytes_received_per_step;
  out.comm_bytes_match_theory = out.comm_bytes == theory.bytes_per_rank_per_step;
  out.max_rel_err_vs_single = chosen.max_rel_err;
  out.bit_identical_vs_single = chosen.bit_identical;
  out.replicas_identical = chosen.result.replicas_identical;
  out.timed_steps = int(chosen.step_us.size());
  out.hardware_threads = std::max(1, int(std::thread::hardware_concurrency()));
  out.threads_used = chosen.config.mode == SyncMode::Ddp ? 2 * chosen.config.ranks : chosen.config.ranks;
  out.communication_core_set_aside = device.communication_core_set_aside(chosen.result);
  out.on_gpu = device.on_gpu();
  return out;
}

std::string measured_thread_level(const RunResult& r) {
  const auto* m = r.measured_as<ddp::DdpMeasured>();
  return m ? m->mpi_thread_level : std::string();
}

// The chosen configuration, then every one of the run plan (with ranks as processes the plan is empty). On rank
// threads each is held against single-rank training on the full batch; `placement` says where the ranks ran. Each
// training is one part of `parts` (which weighs plan.size() + 2): the reference, the chosen configuration, the plan's.
std::vector<Measured> train_every_configuration(const TrainConfig& chosen, const std::vector<PlannedRun>& plan,
                                                const training::DataSet& data, bool processes,
                                                const ddp::DdpDevice& device, RunContext& ctx, RunPlan& parts,
                                                std::string& placement) {
  std::vector<float> single;
  std::vector<Measured> all;
  if (processes) {
    parts.start("the chosen configuration, one rank per process");
    all.push_back(measure_processes(chosen, data, ctx, parts));
    placement = ddp::process_placement_text(ctx.backend);
  } else {
    parts.start("single-rank training on the full batch (the reference)");
    single = ddp::train_single_rank(chosen, data);
    parts.start("the chosen configuration");
    all.push_back(measure(chosen, data, single, device, ctx, &placement));
  }
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const TrainConfig& c = plan[i].config;
    parts.start(fmt::format("{}: {} N = {}, bucket {}", plan[i].purpose, mode_name(c.mode), c.ranks, bucket_text(c)));
    all.push_back(measure(c, data, single, device, ctx));
  }
  return all;
}

// The chosen run's figures, the variants, the fastest bucket and one bucket, and the benchmark's verdict.
ddp::DdpMeasured measured_of_all(const std::vector<Measured>& all, const std::vector<PlannedRun>& plan,
                                 const TrainConfig& chosen, const ddp::DdpTheory& theory,
                                 const ddp::DdpDevice& device) {
  ddp::DdpMeasured measured = measured_of(all.front(), theory, device);
  for (std::size_t i = 0; i < all.size(); ++i)
    if (i == 0 || (i - 1 < plan.size() && std::string(plan[i - 1].purpose) == "variant"))
      measured.variants.push_back(variant_of(all[i], i == 0));
  const std::int64_t quarter = std::max<std::int64_t>(2, training::parameter_count(chosen.shape) / 4 / 2 * 2);
  for (std::size_t i = 0; i < plan.size(); ++i)
    if (std::string(plan[i].purpose) == "benchmark") {
      measured.bench_overlap_fraction = median(all[i + 1].overlap);
      measured.bench_bucket_bytes = quarter * 4;
    }
  for (const Measured& m : all) {
    if (m.config.mode != SyncMode::Ddp || m.config.ranks != chosen.ranks || !is_base(m.config)) continue;
    const double step = median(m.step_us);
    if (measured.best_bucket_bytes == 0 || step < measured.best_bucket_step_us) {
      measured.best_bucket_bytes = m.config.bucket_elements * 4;
      measured.best_bucket_step_us = step;
    }
    if (m.config.bucket_elements >= training::parameter_count(chosen.shape)) measured.one_bucket_step_us = step;
  }
  measured.bench_overlap_expected = kOverlapExpected;
  measured.bench_met = measured.bench_overlap_fraction >= kOverlapExpected;
  return measured;
}

// The chosen run's last step, and one bucket's and DataParallel's beside it when the plan trained them.
void add_timelines(RunResult& result, const std::vector<Measured>& all, const TrainConfig& chosen) {
  const Measured& first = all.front();
  result.timelines.push_back(timeline_of(
      first, fmt::format("{}, N = {}, {} (measured)", mode_name(chosen.mode) == "ddp" ? "DDP" : "DataParallel",
                         chosen.ranks, chosen.mode == SyncMode::Ddp ? "bucket " + bucket_text(chosen) : "one master")));
  if (const Measured* one = find(all, chosen.ranks, SyncMode::Ddp, training::parameter_count(chosen.shape)))
    if (one != &first)
      result.timelines.push_back(timeline_of(*one, fmt::format("DDP, N = {}, one bucket (measured)", chosen.ranks)));
  if (const Measured* dp = find(all, chosen.ranks, SyncMode::DataParallel, 0))
    if (dp != &first)
      result.timelines.push_back(timeline_of(*dp, fmt::format("DataParallel, N = {} (measured)", chosen.ranks)));
}

void add_process_notes(RunResult& result, bool on_gpu, const std::string& placement) {
  result.backend.emulated = on_gpu && ddp::processes_share_gpus();
  result.backend.notes.push_back(placement);
  result.backend.notes.push_back(
      on_gpu ? "per process a compute stream (cuBLAS, fp32 without TF32) and a communication stream running the "
               "lab's ring over CUDA IPC on each bucket; the chosen configuration only"
             : fmt::format("per process a compute thread and a communication thread (the lab's ring over "
                           "MPI_Sendrecv, {}); the chosen configuration only",
                           measured_thread_level(result)));
  if (result.backend.emulated)
    result.backend.notes.push_back(
        "emulated: more processes than GPUs, so ranks take turns on a GPU and hide less communication than a GPU "
        "each would");
  if (on_gpu) result.backend.notes.push_back(ddp::kGpuWeightsNote);
}

// Ranks in this process: whether they emulate as many machines, and the device's notes.
void add_device_notes(RunResult& result, const ddp::DdpDevice& device, const TrainConfig& chosen,
                      const Measured& chosen_run, const std::string& placement) {
  result.backend.emulated = device.emulated(chosen.ranks);
  for (std::string& note : device.notes(chosen, chosen_run.result, placement))
    result.backend.notes.push_back(std::move(note));
}

}  // namespace

RunResult DdpLesson::run_with(const ddp::DdpParams& p, RunContext& ctx) const {
  RunResult result = begin_result(*this, ctx);
  const std::unique_ptr<ddp::DdpDevice> device = ddp::make_ddp_device(ctx.backend);
  result.backend.emulated = true;  // until the ranks' placement is known (below)
  result.backend.timer = device->timer();
  result.backend.repeats = p.steps;
  const TrainConfig chosen = ddp_config(p);
  const std::vector<PlannedRun> plan = ddp_run_plan(p, ctx.backend);
  int most_steps = chosen.steps;  // the benchmark trains longer than the others: its rows must exist too
  for (const PlannedRun& r : plan) most_steps = std::max(most_steps, r.config.steps);
  const training::DataSet data =
      training::make_data_set(chosen.shape, chosen.global_batch * most_steps, chosen.seed + 100);
  const bool processes = p.launcher == ddp::Launcher::Mpi;

  std::string placement;
  RunPlan parts(ctx.control, double(plan.size()) + 2);
  const std::vector<Measured> all =
      train_every_configuration(chosen, plan, data, processes, *device, ctx, parts, placement);
  ddp::DdpMeasured measured = measured_of_all(all, plan, chosen, *result.theory_as<ddp::DdpTheory>(), *device);
  measured.placement = placement;
  if (processes) {
    measured.launcher = "mpi";
    measured.mpi_thread_level = ddp::process_thread_level();
  }
  result.measured = make_values(std::move(measured));
  result.series = bucket_series(all, chosen.ranks);
  for (Series& s : ranks_series(all, chosen)) result.series.push_back(std::move(s));
  add_timelines(result, all, chosen);
  if (processes)
    add_process_notes(result, device->on_gpu(), placement);
  else
    add_device_notes(result, *device, chosen, all.front(), placement);
  parts.finish();
  finish_result(result, ctx.ledger);
  return result;
}

}  // namespace dlsys
