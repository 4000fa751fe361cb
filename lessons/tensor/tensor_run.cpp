// The tensor lesson's run: the layer on t CPU rank threads or t GPU ranks, checked against the unsharded layer in
// double, then measured against t and against h; or the course's 4x4 example alone; or nothing (the calculator).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/measure.h"
#include "engine/units.h"
#include "kernels/tensor/activation_memory.h"
#include "kernels/tensor/linear_split.h"
#include "kernels/tensor/tensor_devices.h"
#include "lessons/common/run_plan.h"
#include "lessons/tensor/tensor_lesson.h"

namespace dlsys {

namespace {

using tensor::LayerShape;

// What the timed steps of one configuration gave. Times per step are the slowest rank's: a step of a
// tensor-parallel layer ends when its last rank does.
struct ConfigMeasure {
  LayerShape shape;
  std::vector<double> compute_us, comm_us, step_us;  // per timed step
  std::vector<double> compute_cpu_us;                // per timed step: the busiest rank's thread CPU time (CPU ranks)
  std::int64_t activation_bytes = 0;                 // rank 0's, from the device's ledger
  bool ranks_hold_equal_activations = true;
  std::int64_t comm_bytes = 0;                // sent by rank 0 in one step
  std::vector<tensor::CollectiveCall> calls;  // rank 0's, with the median time of each over the steps
  std::vector<tensor::TensorError> errors;    // against the reference, for the chosen configuration only
  tensor::RankPlacement placement;            // where the ranks ran
};

TimingStats stats(const std::vector<double>& samples) { return summarize_us(samples, "steady_clock"); }

// One timed step of every rank: the slowest rank's times, rank 0's collectives and their times.
void add_step(ConfigMeasure& m, std::vector<std::vector<double>>& call_times,
              const std::vector<tensor::RankStepTimes>& ranks, bool thread_cpu_time) {
  double compute = 0, comm = 0, step = 0, cpu = 0;
  for (const tensor::RankStepTimes& r : ranks) {
    compute = std::max(compute, r.compute_us);
    cpu = std::max(cpu, r.compute_cpu_us);
    comm = std::max(comm, r.comm_us);
    step = std::max(step, r.step_us);
  }
  m.compute_us.push_back(compute);
  m.comm_us.push_back(comm);
  m.step_us.push_back(step);
  if (thread_cpu_time) m.compute_cpu_us.push_back(cpu);
  m.calls = ranks.front().calls;
  call_times.resize(m.calls.size());
  for (std::size_t c = 0; c < m.calls.size(); ++c) call_times[c].push_back(m.calls[c].time_us);
}

// One configuration on the device: its layer made, `repeats` steps timed after one untimed, and with a `reference`
// its results checked against it.
template <typename Device>
ConfigMeasure measure_config(const Device& device, const LayerShape& shape, int repeats, RunContext& ctx,
                             const tensor::RankLayer<double>* reference) {
  ConfigMeasure m{.shape = shape};
  const std::unique_ptr<typename Device::Layer> layer = device.make_layer(shape);
  m.placement = layer->placement();
  m.activation_bytes = layer->activation_bytes(0);
  for (int r = 1; r < shape.ranks; ++r)
    m.ranks_hold_equal_activations &= layer->activation_bytes(r) == m.activation_bytes;
  std::vector<std::vector<double>> call_times;
  for (int i = 0; i <= repeats; ++i) {  // the first step is not timed
    ctx.control.check_cancelled();
    const std::vector<tensor::RankStepTimes> ranks = layer->step();
    if (i > 0) add_step(m, call_times, ranks, Device::kRanksHaveThreadCpuTime);
  }
  m.comm_bytes = 0;
  for (std::size_t c = 0; c < m.calls.size(); ++c) {
    m.calls[c].time_us = stats(call_times[c]).median_us;
    m.comm_bytes += m.calls[c].bytes_sent;
  }
  if (reference != nullptr) m.errors = layer->errors_against(*reference);
  return m;
}

double ring_bytes(collectives::Op op, int t, std::int64_t elements) {
  const double share = double(t - 1) / t;
  return (op == collectives::Op::AllReduce ? 2 * share : share) * double(elements) * 4;
}

tensor::TensorMeasured measured_of(const ConfigMeasure& chosen, const tensor::TensorTheory& theory) {
  tensor::TensorMeasured out;
  const TimingStats compute = stats(chosen.compute_us), comm = stats(chosen.comm_us), step = stats(chosen.step_us);
  out.compute_us = compute.median_us;
  out.compute_us_min = compute.min_us;
  out.compute_us_max = compute.max_us;
  out.comm_us = comm.median_us;
  out.comm_us_min = comm.min_us;
  out.comm_us_max = comm.max_us;
  out.step_us = step.median_us;
  out.step_us_min = step.min_us;
  out.step_us_max = step.max_us;
  if (!chosen.compute_cpu_us.empty()) out.compute_cpu_us = stats(chosen.compute_cpu_us).median_us;
  out.timed_steps = static_cast<int>(chosen.step_us.size());
  out.comm_bytes = chosen.comm_bytes;
  out.comm_bytes_match_formula = double(chosen.comm_bytes) == theory.comm_bytes_per_step_per_rank;
  for (const tensor::TensorError& e : chosen.errors) {
    out.errors.push_back({e.key, e.name, e.max_rel_err});
    // A NaN (an element never computed) must survive: max() would drop it.
    out.max_rel_err = std::isnan(e.max_rel_err) ? e.max_rel_err : std::max(out.max_rel_err, e.max_rel_err);
  }
  out.activation_bytes_measured = chosen.activation_bytes;
  out.activation_bytes_match_formula =
      chosen.ranks_hold_equal_activations && chosen.activation_bytes == theory.lab_activation_bytes_per_rank;
  for (const tensor::CollectiveCall& c : chosen.calls)
    out.collectives.push_back({collectives::op_name(c.op), c.site, c.backward ? "backward" : "forward", c.elements,
                               c.bytes_sent, ring_bytes(c.op, chosen.shape.ranks, c.elements), c.time_us});
  out.max_rel_err_bar = kMaxRelErrBar;
  out.meets_error_bar = out.max_rel_err <= kMaxRelErrBar;
  return out;
}

const ConfigMeasure* find(const std::vector<ConfigMeasure>& all, std::int64_t hidden, int ranks) {
  for (const ConfigMeasure& m : all)
    if (m.shape.hidden == hidden && m.shape.ranks == ranks) return &m;
  return nullptr;
}

Series series(const char* id, const std::string& name, const char* role, const char* x_label, const char* y_label,
              const char* y_unit) {
  return Series{id, name, role, x_label, "", y_label, y_unit, {}};
}

void add_timing(Series& s, double x, const std::vector<double>& samples) {
  const TimingStats t = stats(samples);
  s.points.push_back({x, t.median_us, t.min_us, t.max_us});
}

void add_value(Series& s, double x, double y) { s.points.push_back({x, y, y, y}); }

// Against t at the chosen h: per-rank compute with its ideal 1/t line, communication time, bytes sent per rank
// (counted and from the formula), activation bytes per rank (ledger and formula).
std::vector<Series> series_against_t(const std::vector<ConfigMeasure>& all, const LayerShape& chosen) {
  Series compute = series("compute_vs_t", "compute, wall (measured)", "measured", "ranks t", "time", "us");
  Series cpu = series("compute_cpu_vs_t", "compute, CPU time (measured)", "measured", "ranks t", "time", "us");
  Series ideal = series("compute_ideal_vs_t", "t = 1's compute / t", "theory", "ranks t", "time", "us");
  Series comm = series("comm_vs_t", "communication (measured)", "measured", "ranks t", "time", "us");
  Series step = series("step_vs_t", "step (measured)", "measured", "ranks t", "time", "us");
  Series bytes = series("comm_bytes_vs_t", "bytes sent per rank (counted)", "measured", "ranks t", "bytes", "bytes");
  Series bytes_theory =
      series("comm_bytes_formula_vs_t", "bytes sent per rank (formula)", "theory", "ranks t", "bytes", "bytes");
  Series act = series("activation_vs_t", "activations per rank (ledger)", "measured", "ranks t", "bytes", "bytes");
  Series act_theory =
      series("activation_formula_vs_t", "activations per rank (lab formula)", "theory", "ranks t", "bytes", "bytes");
  const ConfigMeasure* one = find(all, chosen.hidden, 1);
  for (const ConfigMeasure& m : all) {
    if (m.shape.hidden != chosen.hidden) continue;
    const double t = m.shape.ranks;
    add_timing(compute, t, m.compute_us);
    if (!m.compute_cpu_us.empty()) add_timing(cpu, t, m.compute_cpu_us);
    add_timing(comm, t, m.comm_us);
    add_timing(step, t, m.step_us);
    if (one) add_value(ideal, t, stats(one->compute_us).median_us / t);
    add_value(bytes, t, double(m.comm_bytes));
    double formula = 0;
    for (const tensor::CollectiveCall& c : m.calls) formula += ring_bytes(c.op, m.shape.ranks, c.elements);
    add_value(bytes_theory, t, formula);
    add_value(act, t, double(m.activation_bytes));
    add_value(act_theory, t, double(tensor::lab_layer_bytes(m.shape).total()));
  }
  std::vector<Series> out;
  for (Series* s : {&compute, &cpu, &ideal, &comm, &step, &bytes, &bytes_theory, &act, &act_theory}) {
    std::sort(s->points.begin(), s->points.end(), [](const auto& a, const auto& b) { return a.x < b.x; });
    if (!s->points.empty()) out.push_back(std::move(*s));
  }
  return out;
}

// Against h at the chosen t: compute and communication, t = 1's compute, and the time splitting saved (t = 1's
// compute minus the chosen t's), to set beside the communication it costs.
std::vector<Series> series_against_hidden(const std::vector<ConfigMeasure>& all, const LayerShape& chosen) {
  Series compute = series("compute_vs_hidden", "compute (measured)", "measured", "hidden h", "time", "us");
  Series comm = series("comm_vs_hidden", "communication (measured)", "measured", "hidden h", "time", "us");
  Series one = series("compute_t1_vs_hidden", "compute, t = 1 (measured)", "measured", "hidden h", "time", "us");
  Series gain = series("gain_vs_hidden", "saved vs t = 1 (measured)", "measured", "hidden h", "time", "us");
  for (const ConfigMeasure& m : all) {
    if (m.shape.ranks != chosen.ranks) continue;
    const double h = double(m.shape.hidden);
    add_timing(compute, h, m.compute_us);
    add_timing(comm, h, m.comm_us);
    if (const ConfigMeasure* base = find(all, m.shape.hidden, 1)) {
      add_timing(one, h, base->compute_us);
      add_value(gain, h, stats(base->compute_us).median_us - stats(m.compute_us).median_us);
    }
  }
  std::vector<Series> out;
  for (Series* s : {&compute, &comm, &one, &gain}) {
    std::sort(s->points.begin(), s->points.end(), [](const auto& a, const auto& b) { return a.x < b.x; });
    if (!s->points.empty()) out.push_back(std::move(*s));
  }
  return out;
}

// The run's expectation: at t = 2, per-rank compute at most 0.6 of t = 1's, each the fastest timed step (the one
// least slowed by other programs), at the chosen h; and what the device says when per-rank compute did not fall.
template <typename Device>
void judge_compute(tensor::TensorMeasured& out, const std::vector<ConfigMeasure>& all, const LayerShape& chosen) {
  const ConfigMeasure *one = find(all, chosen.hidden, 1), *two = find(all, chosen.hidden, 2);
  out.compute_ratio_bar = kComputeRatioBar;
  if (one && two) {
    out.compute_ratio_t2_over_t1 = stats(two->compute_us).min_us / stats(one->compute_us).min_us;
    if (!one->compute_cpu_us.empty() && !two->compute_cpu_us.empty())
      out.compute_cpu_ratio_t2_over_t1 = stats(two->compute_cpu_us).min_us / stats(one->compute_cpu_us).min_us;
    out.meets_compute_bar = out.compute_ratio_t2_over_t1 <= kComputeRatioBar;
    out.gpu_scaling_caveat = Device::compute_scaling_caveat(out.compute_ratio_t2_over_t1, chosen.hidden);
  }
  out.at_bar_sizes = chosen.hidden == kBarHidden && chosen.seq == kBarSeq && chosen.ranks == 2;
}

tensor::CourseExample run_course_example() {
  using namespace tensor;
  const LinearSplitRecord column = column_split(course_x(), course_w(), kCourseDim, kCourseRanks);
  const LinearSplitRecord row = row_split(course_x(), course_w(), kCourseDim, kCourseRanks);
  CourseExample e;
  e.y = column.ranks.front().result;
  e.y_row_split = row.ranks.front().result;
  e.ranks_agree = true;
  for (const auto& r : column.ranks) {
    e.halves.push_back(r.local);
    e.ranks_agree &= r.result == e.y;
  }
  for (const auto& r : row.ranks) {
    e.partials.push_back(r.local);
    e.ranks_agree &= r.result == e.y;
  }
  return e;
}

// The layer on `device`: the unsharded reference, the chosen configuration checked against it, then the rest of the
// plan, each configuration a part of equal weight.
template <typename Device>
void run_layer_on(const Device& device, const tensor::TensorParams& p, RunContext& ctx, RunResult& result) {
  const LayerShape& chosen = p.shape;
  result.backend.timer = Device::kTimer;
  result.backend.repeats = p.repeats;
  const std::vector<LayerShape> plan = run_plan(p);
  int most_ranks = 1;
  for (const LayerShape& s : plan) most_ranks = std::max(most_ranks, s.ranks);
  const tensor::SingleThreadedBlas blas(Device::blas_rank_threads(most_ranks));

  RunPlan parts(ctx.control, double(plan.size()) + 1);
  std::vector<ConfigMeasure> all;
  {
    parts.start("the unsharded layer in double (the reference)");
    const tensor::RankLayer<double> reference = tensor::stepped_reference_layer(chosen, ctx.ledger);
    parts.start(fmt::format("t = {}, h = {}", chosen.ranks, chosen.hidden));
    all.push_back(measure_config(device, chosen, p.repeats, ctx, &reference));
  }
  for (std::size_t i = 1; i < plan.size(); ++i) {
    parts.start(fmt::format("t = {}, h = {}", plan[i].ranks, plan[i].hidden));
    all.push_back(measure_config(device, plan[i], p.repeats, ctx, nullptr));
  }

  tensor::TensorMeasured measured = measured_of(all.front(), *result.theory_as<tensor::TensorTheory>());
  measured.on_gpu = Device::kOnGpu;
  measured.placement = all.front().placement.description;
  judge_compute<Device>(measured, all, chosen);
  result.measured = make_values(std::move(measured));
  result.series = series_against_t(all, chosen);
  for (Series& s : series_against_hidden(all, chosen)) result.series.push_back(std::move(s));
  std::vector<tensor::RankPlacement> ran;
  result.backend.emulated = false;
  for (const ConfigMeasure& m : all) {
    ran.push_back(m.placement);
    result.backend.emulated |= m.placement.emulated;
  }
  for (std::string& note : Device::notes(ran)) result.backend.notes.push_back(std::move(note));
  parts.finish();
}

// The run on `device`: the calculator alone, the course's worked example (on CPU rank threads whatever the device),
// or the layer.
template <typename Device>
void run_on(const Device& device, const tensor::TensorParams& p, RunContext& ctx, RunResult& result) {
  if (p.mode == tensor::TensorMode::Theory) {
    result.backend.emulated = false;
    result.backend.notes.push_back("calculator only: the activation bytes come from the formula; nothing ran");
    return;
  }
  if (p.example == tensor::TensorExample::Course) {
    result.backend.emulated = true;  // two rank threads of one CPU
    result.measured = make_values(tensor::TensorMeasured{.example = run_course_example()});
    result.backend.notes.push_back(
        "worked example only: the course's W and x on two CPU rank threads, gathered and all-reduced by the lab's "
        "ring");
    if (!Device::kCourseExampleNote.empty()) result.backend.notes.emplace_back(Device::kCourseExampleNote);
    return;
  }
  run_layer_on(device, p, ctx, result);
}

}  // namespace

RunResult TensorLesson::run_with(const tensor::TensorParams& p, RunContext& ctx) const {
  RunResult result = begin_result(*this, ctx);
  if (ctx.backend == BackendKind::Cuda)
    run_on(tensor::CudaTensor(), p, ctx, result);
  else
    run_on(tensor::CpuTensor(ctx.ledger), p, ctx, result);
  finish_result(result, ctx.ledger);
  return result;
}

}  // namespace dlsys
