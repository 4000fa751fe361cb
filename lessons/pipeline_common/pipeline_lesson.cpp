// Shared by the `bubble` and `schedules` lessons (see pipeline_lesson.h).
#include "lessons/pipeline_common/pipeline_lesson.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <thread>
#include <tuple>

#include "engine/errors.h"
#include "engine/host_memory.h"
#include "engine/units.h"
#include "kernels/pipeline/bubble_theory.h"
#include "kernels/pipeline/executor_common.h"
#include "kernels/pipeline/pipeline_devices.h"
#include "lessons/common/run_time_limit.h"

namespace dlsys::pipeline_lesson {

using namespace pipeline;
using json = nlohmann::ordered_json;

namespace {

double worst_idle(const Timing& t) {
  double worst = 0;
  for (double busy : t.busy) worst = std::max(worst, t.makespan - busy);
  return worst;
}

double max_busy(const Timing& t) { return t.busy.empty() ? 0.0 : *std::max_element(t.busy.begin(), t.busy.end()); }

std::vector<int> peaks_in_flight(const Timing& t) {
  std::vector<int> peaks;
  for (int d = 0; d < static_cast<int>(t.device_ops.size()); ++d) peaks.push_back(in_flight(t, d).peak);
  return peaks;
}

// Which share of the model one chunk is: the unit the bubble times and in-flight counts of a schedule are in.
std::string chunk_share(const Schedule& s) { return fmt::format("1/{}", s.stages); }

OpCosts costs_for(const Setup& setup, const Schedule& s) {
  OpCosts c = setup.costs;
  if (!c.stage_scale.empty()) {  // the imbalance belongs to the last model stage, wherever the schedule puts it
    const double heavy = c.stage_scale.back();
    c.stage_scale.assign(s.stages, 1.0);
    c.stage_scale.back() = heavy;
  }
  return c;
}

// The closed form in the notation the user chose: DeepSeek-V3's B is the full backward, the zero-bubble paper's B
// the input gradient alone (so its B + W is DeepSeek's B).
std::string formula_text(ScheduleKind kind, const std::string& notation) {
  const bool full = notation == "full";
  switch (kind) {
    case ScheduleKind::GPipe:
    case ScheduleKind::OneFOneB:
      return full ? "(p-1)(F+B)" : "(p-1)(F+B+W)";
    case ScheduleKind::Interleaved:
      return full ? "(p-1)(F+B) per chunk = (p-1)/(v m) of ideal" : "(p-1)(F+B+W) per chunk = (p-1)/(v m) of ideal";
    case ScheduleKind::ZbH1:
      return full ? "(p-1)(F+B-2W)" : "(p-1)(F+B-W)";
    case ScheduleKind::DualPipe:
      return full ? "(p/2-1)(F&B+B-3W)" : "(p/2-1)(F&B+B-2W)";
    case ScheduleKind::DualPipeV:
      return full ? "(p-1)(F&B+B-3W)" : "(p-1)(F&B+B-2W)";
  }
  return "";
}

// The schedule's costs taken from a run: the median op times (the median stage is an unscaled one, so the stage
// scales of the imbalance still apply), no latency since copies run inside the ops, no overlap gain for pairs.
OpCosts median_costs(const ExecutionResult& r, const OpCosts& schedule_costs) {
  OpCosts c = schedule_costs;
  c.p2p = 0;
  c.fb = 0;
  c.f = r.durations.f_us;
  c.w = r.durations.w_us;
  c.b = r.durations.b_us > 0 ? r.durations.b_us : std::max(0.0, r.durations.b_full_us - c.w);
  return c;
}

ScheduleComparison comparison_entry(ScheduleKind kind, const Setup& setup) {
  ScheduleShape shape = setup.shape;
  shape.kind = kind;
  shape.chunks = setup.chunks;
  ScheduleComparison e;
  e.schedule = schedule_id(kind);
  e.title = schedule_title(kind);
  try {
    check_shape(shape);
  } catch (const BadInput& why) {
    e.why = why.what();
    return e;
  }
  const Schedule s = make_schedule(shape);
  const OpCosts c = costs_for(setup, s);
  const Timing t = simulate(s, c);
  const auto formula = theory::formula_bubble(kind, shape.devices, shape.micro_batches, s.shape.chunks, c);
  const auto peaks = peaks_in_flight(t);
  e.available = true;
  e.devices = s.devices();
  e.stages = s.stages;
  e.chunk = chunk_share(s);
  e.param_copies = s.param_copies;
  e.formula = formula_text(kind, setup.notation);
  e.formula_source = formula.source;
  e.bubble_formula = formula.bubble;
  e.bubble_simulated = worst_idle(t);
  if (formula.idle_fraction >= 0) e.bubble_fraction_formula = formula.idle_fraction;
  e.bubble_fraction_simulated = t.bubble_fraction();
  if (formula.ratio >= 0) e.bubble_ratio_formula = formula.ratio;
  e.bubble_ratio_simulated = t.bubble_ratio();
  e.makespan = t.makespan;
  e.stage_fb = double(s.stages) / s.devices() * (c.f + c.full_backward());
  e.bubble_stage_fb_formula = e.bubble_formula / e.stage_fb;
  e.bubble_stage_fb_simulated = e.bubble_simulated / e.stage_fb;
  e.peak_inflight = *std::max_element(peaks.begin(), peaks.end());
  // In units of one micro-batch through 1/p of the model, so schedules with smaller chunks compare fairly.
  e.peak_activation_stage_units = double(e.peak_inflight) * s.devices() / s.stages;
  return e;
}

}  // namespace

std::vector<ParamSpec> param_specs(const Defaults& d) {
  const std::vector<std::string> schedules = schedule_ids();
  return {
      {.key = "schedule",
       .label = "schedule",
       .type = ParamType::Choice,
       .default_text = d.schedule,
       .choices = schedules,
       .help = "gpipe: all F then all B; 1f1b: one F, one B; interleaved: v chunks per device; zb-h1: B and W split; "
               "dualpipe: both directions; dualpipev: the V-shaped DualPipe"},
      {.key = "p",
       .label = "p (pipeline devices)",
       .type = ParamType::Integer,
       .default_text = std::to_string(d.p),
       .min = 1,
       .max = 32,
       .help = "stages (devices) in the pipeline"},
      {.key = "m",
       .label = "m (micro-batches)",
       .type = ParamType::Integer,
       .default_text = std::to_string(d.m),
       .min = 1,
       .max = 256,
       .help = "micro-batches per step"},
      {.key = "v",
       .label = "v (chunks per device)",
       .type = ParamType::Integer,
       .default_text = "2",
       .min = 1,
       .max = 8,
       .help = "interleaved only: model chunks per device"},
      {.key = "notation",
       .label = "meaning of b",
       .type = ParamType::Choice,
       .default_text = "full",
       .choices = notation_choices(),
       .help =
           "full: b is the full backward (DeepSeek-V3 table); input: b is the input-gradient pass alone (zero-bubble "
           "paper)"},
      {.key = "f",
       .label = "F cost",
       .type = ParamType::Real,
       .default_text = "1",
       .min = 0.001,
       .max = 1000,
       .unit = "units",
       .help = "forward of one chunk"},
      {.key = "b",
       .label = "B cost",
       .type = ParamType::Real,
       .default_text = "2",
       .min = 0.001,
       .max = 1000,
       .unit = "units",
       .help = "backward of one chunk (see notation)"},
      {.key = "w",
       .label = "W cost",
       .type = ParamType::Real,
       .default_text = "1",
       .max = 1000,
       .unit = "units",
       .help = "weight-gradient pass of one chunk"},
      {.key = "fb",
       .label = "F&B cost",
       .type = ParamType::Real,
       .default_text = "0",
       .max = 2000,
       .unit = "units",
       .help = "DualPipe: a forward overlapped with a full backward; 0 = no overlap gain (F + full B)"},
      {.key = "p2p",
       .label = "p2p latency",
       .type = ParamType::Real,
       .default_text = "0",
       .max = 1000,
       .unit = "units",
       .help = "theory: time a message between devices takes"},
      {.key = "imbalance",
       .label = "last stage blocks",
       .type = ParamType::Integer,
       .default_text = "1",
       .min = 1,
       .max = 8,
       .help = "the last model stage holds this many MLP blocks, the others one (theory scales its F, B, W alike)"},
      {.key = "hidden",
       .label = "hidden width",
       .type = ParamType::Integer,
       .default_text = "512",
       .min = 8,
       .max = 4096,
       .help = "MLP width of every block (fp32)"},
      {.key = "microbatch",
       .label = "rows per micro-batch",
       .type = ParamType::Integer,
       .default_text = "64",
       .min = 1,
       .max = 4096,
       .help = "samples in one micro-batch"},
      {.key = "mode",
       .label = "execution",
       .type = ParamType::Choice,
       .default_text = "auto",
       .choices = {"auto", "concurrent", "replayed"},
       .help =
           "concurrent: one thread per stage (needs p <= hardware threads; on cuda one GPU per stage, needs p GPUs); "
           "replayed: ops run one by one, their durations replayed on the schedule; auto: concurrent when it fits (on "
           "cuda with fewer than p GPUs: the stages as streams on one GPU, emulated)"},
      {.key = "repeats",
       .label = "timed steps",
       .type = ParamType::Integer,
       .default_text = "5",
       .min = 1,
       .max = 50,
       .help = "median step of this many, after one warm-up"},
      max_minutes_param(),
  };
}

const std::vector<std::string>& notation_choices() {
  static const std::vector<std::string> choices = {"full", "input"};  // in the order of Notation
  return choices;
}

PipelineParams read_pipeline_params(const ParamValues& values) {
  PipelineParams p;
  p.schedule = parse_schedule(values.text("schedule"));
  p.p = static_cast<int>(values.integer("p"));
  p.m = static_cast<int>(values.integer("m"));
  p.v = static_cast<int>(values.integer("v"));
  p.notation = static_cast<Notation>(choice_index(values, "notation", notation_choices()));
  p.f = values.real("f");
  p.b = values.real("b");
  p.w = values.real("w");
  p.fb = values.real("fb");
  p.b_text = values.text("b");
  p.w_text = values.text("w");
  p.fb_text = values.text("fb");
  p.p2p = values.real("p2p");
  p.imbalance = static_cast<int>(values.integer("imbalance"));
  p.hidden = static_cast<int>(values.integer("hidden"));
  p.microbatch = static_cast<int>(values.integer("microbatch"));
  p.mode = static_cast<ExecutionMode>(choice_index(values, "mode", {"auto", "concurrent", "replayed"}));
  p.repeats = static_cast<int>(values.integer("repeats"));
  p.max_minutes = values.real("max_minutes");
  if (values.has("sweep")) {
    for (double m : values.list("sweep")) p.sweep.push_back(static_cast<int>(m));
    p.sweep_text = values.text("sweep");
  }
  return p;
}

Setup setup_of(const PipelineParams& p) {
  Setup s;
  s.shape.kind = p.schedule;
  s.shape.devices = p.p;
  s.shape.micro_batches = p.m;
  s.chunks = p.v;
  s.shape.chunks = s.shape.kind == ScheduleKind::Interleaved ? s.chunks : 1;
  check_shape(s.shape);
  s.notation = notation_choices()[static_cast<std::size_t>(p.notation)];
  const bool full = p.notation == Notation::Full;
  if (full && !(p.b > p.w))
    throw BadInput(
        fmt::format("parameter 'b': value '{}' is not allowed with notation=full and w = {}: b is the full "
                    "backward, input gradient plus weight gradient, so it must exceed w (or use "
                    "notation=input, where b is the input-gradient pass alone)",
                    p.b_text, p.w_text));
  s.costs.f = p.f;
  s.costs.b = full ? p.b - p.w : p.b;
  s.costs.w = p.w;
  s.costs.p2p = p.p2p;
  const double full_b = s.costs.full_backward();
  if (p.fb != 0 && p.fb < std::max(p.f, full_b))
    throw BadInput(
        fmt::format("parameter 'fb': value '{}' is not allowed: an overlapped forward and full backward "
                    "cannot finish before the longer of the two (F = {}, full B = {}); allowed: 0 (no "
                    "overlap) or a number from {} up",
                    p.fb_text, format_number(p.f), format_number(full_b), format_number(std::max(p.f, full_b))));
  s.costs.fb = p.fb;
  if (p.imbalance > 1) s.costs.stage_scale = {double(p.imbalance)};  // resized to the schedule's stages in costs_for
  s.executor.hidden = p.hidden;
  s.executor.microbatch_rows = p.microbatch;
  s.executor.last_stage_blocks = p.imbalance;
  s.executor.repeats = p.repeats;
  s.executor.mode = p.mode;
  s.executor.hardware_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return s;
}

void check_host_memory(const Setup& s) {
  const std::int64_t need = estimate_executor_bytes(make_schedule(s.shape), s.executor);
  const HostMemory host = host_memory();
  if (!host.fits(double(need)))
    throw BadInput(
        fmt::format("parameters 'hidden' x 'microbatch' x 'm': the run would need up to {} of host memory "
                    "but only {} is available; lower hidden, microbatch, m or p",
                    format_bytes_both(double(need)), format_bytes_both(host.free_bytes)));
}

void check_backend(const Setup& s, BackendKind backend) {
  if (backend == BackendKind::Cpu) {
    resolve_mode(s.executor.mode, s.shape.devices, s.executor.hardware_threads);  // concurrent on too few cores
    return;
  }
  const int gpus = cuda_status().device_count;
  if (s.executor.mode == ExecutionMode::Concurrent && gpus < s.shape.devices)
    throw BadInput(fmt::format(
        "parameter 'mode': value 'concurrent' is not allowed on the cuda backend with p = {} and {} GPU{}: it needs "
        "one GPU per pipeline device; allowed: auto (the devices as streams on one GPU, emulated) or replayed",
        s.shape.devices, gpus, gpus == 1 ? "" : "s"));
}

namespace {
// Waking a stage thread, taking a message and timestamping cost microseconds per op, whatever its size.
constexpr double kOpOverheadSeconds = 20e-6;
}  // namespace

double cpu_run_seconds(const Setup& setup, int micro_batches) {
  ScheduleShape shape = setup.shape;
  shape.micro_batches = micro_batches;
  const Schedule s = make_schedule(shape);
  const ExecutorConfig& c = setup.executor;
  int blocks = 0;
  for (int stage = 0; stage < s.stages; ++stage) blocks += blocks_of(stage, s.stages, c);
  const double step_flop = 12.0 * blocks * micro_batches * c.microbatch_rows * double(c.hidden) * c.hidden;
  const int cores =
      resolve_mode(c.mode, s.devices(), c.hardware_threads) == ExecutionMode::Concurrent ? s.devices() : 1;
  const double step_s = estimated_seconds(step_flop, kBlasGflopsPerThread, cores) +
                        kOpOverheadSeconds * 3.0 * blocks * micro_batches / cores;
  const double warmup_s = std::max(step_s * c.warmup_steps, c.min_warmup_ms / 1e3);
  const double reference_s = estimated_seconds(step_flop, kBlasGflopsPerThread, 1);
  return warmup_s + step_s * c.repeats + reference_s;
}

std::string cpu_run_work(const Setup& setup) {
  return fmt::format(
      "a warm-up of at least {:g} ms, {} timed steps and a reference step, each of 12 rows h^2 FLOP per "
      "block and micro-batch at {:g} GFLOP/s per stage",
      setup.executor.min_warmup_ms, setup.executor.repeats, kBlasGflopsPerThread);
}

Simulated simulate_setup(const Setup& setup) {
  Schedule s = make_schedule(setup.shape);
  OpCosts c = costs_for(setup, s);
  Timing t = simulate(s, c);
  return {std::move(s), std::move(c), std::move(t)};
}

PipelineTheory theory_of(const PipelineParams& params) {
  const Setup setup = setup_of(params);
  const Simulated sim = simulate_setup(setup);
  const Schedule& s = sim.schedule;
  const OpCosts& c = sim.costs;
  const Timing& t = sim.timing;
  const int p = setup.shape.devices, m = setup.shape.micro_batches;
  const auto formula = theory::formula_bubble(setup.shape.kind, p, m, s.shape.chunks, c);
  PipelineTheory out;
  out.schedule = schedule_id(setup.shape.kind);
  out.stages = s.stages;
  out.chunks_per_device = s.chunks_per_device;
  out.param_copies = s.param_copies;
  out.f = c.f;
  out.b_input = c.b;               // the zero-bubble paper's B
  out.b_full = c.full_backward();  // DeepSeek-V3's B
  out.w = c.w;
  out.fb = c.pair();
  // The idle share of this schedule with these costs, from the simulated timeline: idle / (p x makespan).
  out.bubble_fraction = t.bubble_fraction();
  // Bubble time over ideal compute time (Megatron-LM's normalisation).
  out.bubble_ratio = t.bubble_ratio();
  out.makespan = t.makespan;
  out.ideal_time = max_busy(t);
  out.bubble_time_worst_device = worst_idle(t);
  out.notation = setup.notation;
  out.formula = formula_text(setup.shape.kind, setup.notation);
  out.formula_source = formula.source;
  out.bubble_time_formula = formula.bubble;
  if (formula.idle_fraction >= 0) out.bubble_fraction_formula = formula.idle_fraction;
  if (formula.ratio >= 0) out.bubble_ratio_formula = formula.ratio;
  // The course's fill-drain numbers for this p and m, and the misprinted formula beside them (errata E1).
  out.fill_drain_idle_fraction = theory::fill_drain_idle_fraction(p, m);
  out.megatron_bubble_ratio = theory::bubble_ratio(p, m, s.shape.chunks);
  out.course_misprint = theory::course_misprint(p, m);
  out.peak_inflight = peaks_in_flight(t);
  for (ScheduleKind kind : kAllSchedules) out.comparison.push_back(comparison_entry(kind, setup));
  return out;
}

std::string span_label(const Schedule& s, const Op& op) {
  // Where a micro-batch passes a device more than once (interleaved, DualPipeV), its chunks are told apart by a
  // letter: F3a is micro-batch 3 in the device's first chunk, F3b in its second.
  if (s.stages <= s.devices()) return op_label(op);
  return op_label(op) + char('a' + s.chunk_of(op.micro_batch, op.stage));
}

Timeline to_timeline(const Schedule& s, const Timing& timing, const OpCosts& costs, std::string name,
                     std::string source, std::string mode, std::string time_unit) {
  Timeline line;
  line.name = std::move(name);
  line.source = std::move(source);
  line.mode = std::move(mode);
  line.time_unit = std::move(time_unit);
  for (int d = 0; d < s.devices(); ++d) line.lanes.push_back(fmt::format("device {}", d));
  for (int d = 0; d < s.devices(); ++d) {
    const auto& ops = timing.device_ops[d];
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const TimedOp& t = ops[i];
      auto span = [&](double start, double end, const Op& op) {
        const int chunk = s.chunk_of(op.micro_batch, op.stage);
        line.spans.push_back({d, start, end, std::string(1, op_letter(op.kind)), op.micro_batch, chunk,
                              span_label(s, op), s.direction(op.micro_batch)});
      };
      const bool pair = t.op.paired && i + 1 < ops.size() && ops[i + 1].start == t.start && ops[i + 1].end == t.end;
      if (!pair) {
        span(t.start, t.end, t.op);
        continue;
      }
      // A pair shares its time: draw each half in proportion to its cost alone.
      const TimedOp& u = ops[i + 1];
      const double a = costs.duration(t.op), b = costs.duration(u.op);
      const double mid = t.start + (t.end - t.start) * a / (a + b);
      span(t.start, mid, t.op);
      span(mid, t.end, u.op);
      ++i;
    }
  }
  return line;
}

std::vector<PipelineMessage> messages_of(const Schedule& s, const Timing& timing, double p2p) {
  // End time and device of every F and B, by (kind, micro-batch, stage).
  std::map<std::tuple<OpKind, int, int>, std::pair<int, double>> done;
  for (int d = 0; d < static_cast<int>(timing.device_ops.size()); ++d)
    for (const TimedOp& t : timing.device_ops[d]) done[{t.op.kind, t.op.micro_batch, t.op.stage}] = {d, t.end};
  std::vector<PipelineMessage> messages;
  for (int d = 0; d < static_cast<int>(timing.device_ops.size()); ++d)
    for (const TimedOp& t : timing.device_ops[d]) {
      if (t.op.kind == OpKind::W) continue;
      for (const Op& dep : dependencies(s, t.op)) {
        if (dep.kind != t.op.kind) continue;  // a B's own forward is on its own device
        const auto it = done.find({dep.kind, dep.micro_batch, dep.stage});
        if (it == done.end() || it->second.first == d) continue;
        const double sent = it->second.second;
        messages.push_back({it->second.first, d, sent, sent + p2p, t.op.kind == OpKind::B});
      }
    }
  std::sort(messages.begin(), messages.end(),
            [](const PipelineMessage& a, const PipelineMessage& b) { return a.sent < b.sent; });
  return messages;
}

std::vector<DevicePhases> device_phases(const Schedule& s, const Timing& timing) {
  std::vector<DevicePhases> phases;
  for (int d = 0; d < s.devices(); ++d) {
    const auto& ops = timing.device_ops[d];
    const int n = static_cast<int>(ops.size());
    int first_backward = 0, last_forward = n - 1;
    while (first_backward < n && ops[first_backward].op.kind == OpKind::F) ++first_backward;
    while (last_forward >= 0 && ops[last_forward].op.kind != OpKind::F) --last_forward;
    DevicePhases ph;
    ph.forwards_before_first_backward = first_backward;
    ph.warmup_forwards = std::max(0, first_backward - 1);
    ph.steady_ops = std::max(0, last_forward - first_backward + 1);
    ph.cooldown_ops = n - 1 - last_forward;
    ph.end = timing.makespan;
    ph.warmup_end = first_backward < n ? ops[first_backward].start : ph.end;
    ph.steady_end = std::max(ph.warmup_end, last_forward >= 0 ? ops[last_forward].end : 0.0);
    phases.push_back(ph);
  }
  return phases;
}

InFlight in_flight_from_timeline(const Timeline& timeline, int lane) {
  // (micro-batch, chunk) -> the end of its last backward op on this lane; F start opens it.
  std::map<std::pair<int, int>, double> release, open;
  std::map<std::pair<int, int>, bool> has_w;
  for (const TimelineSpan& s : timeline.spans) {
    if (s.lane != lane) continue;
    const auto key = std::pair{s.micro_batch, s.chunk};
    if (s.kind == "F")
      open[key] = s.start;
    else if (s.kind == "W") {
      has_w[key] = true;
      release[key] = s.end;
    } else if (s.kind == "B" && !has_w[key]) {
      release[key] = std::max(release[key], s.end);
    }
  }
  std::vector<std::pair<double, int>> events;
  for (const auto& [key, start] : open) {
    events.emplace_back(start, +1);
    if (release.count(key)) events.emplace_back(release[key], -1);
  }
  return pipeline::in_flight_from_events(std::move(events));
}

namespace {

// The measured step against the theory's bubble: the spread over steps, the op times, and the gap split into
// uneven op times (the replay against theory) and waiting (the measurement against its replay).
PipelineMeasured measured_of(const pipeline::PipelineDevice& device, const Schedule& s, const ExecutionResult& r,
                             double theory_fraction) {
  PipelineMeasured mr;
  mr.mode = r.mode;
  mr.hardware_threads = r.hardware_threads;
  mr.gpus = device.gpus_used(r);
  mr.bubble_fraction = r.timing.bubble_fraction();
  mr.bubble_ratio = r.timing.bubble_ratio();
  mr.makespan_us = r.timing.makespan;
  mr.makespan_min_us = *std::min_element(r.step_makespans_us.begin(), r.step_makespans_us.end());
  mr.makespan_max_us = *std::max_element(r.step_makespans_us.begin(), r.step_makespans_us.end());
  mr.bubble_fraction_min = *std::min_element(r.step_bubble_fractions.begin(), r.step_bubble_fractions.end());
  mr.bubble_fraction_max = *std::max_element(r.step_bubble_fractions.begin(), r.step_bubble_fractions.end());
  mr.peak_activation_bytes = r.peak_activation_bytes;
  mr.peak_inflight = peaks_in_flight(r.timing);
  mr.grad_max_rel_err = r.grad_max_rel_err;
  mr.f_us = r.durations.f_us;
  if (r.durations.b_us > 0) mr.b_us = r.durations.b_us;
  if (r.durations.b_full_us > 0) mr.b_full_us = r.durations.b_full_us;
  if (r.durations.w_us > 0) mr.w_us = r.durations.w_us;
  mr.copy_us = r.durations.copy_us;
  mr.core_share = device.core_share(r);
  // The same op durations replayed on the schedule: what the step would take with no waiting overheads.
  mr.replay_bubble_fraction = r.replay.bubble_fraction();
  mr.replay_makespan_us = r.replay.makespan;
  mr.bubble_fraction_minus_theory = r.timing.bubble_fraction() - theory_fraction;
  if (r.mode != "replayed") mr.bubble_gap_waiting = mr.bubble_fraction - mr.replay_bubble_fraction;
  mr.bubble_gap_uneven_op_times = mr.replay_bubble_fraction - theory_fraction;
  // p devices working strictly one at a time idle (p - 1)/p of the time, whatever m is: when a GPU run lands there
  // and well above its replay, its streams took turns, and the measured bubble cannot show the schedule's.
  const double taking_turns = double(s.devices() - 1) / s.devices();
  if (device.fed_by_one_host_thread() && s.devices() > 1 && std::fabs(mr.bubble_fraction - taking_turns) < 0.05 &&
      mr.bubble_fraction > mr.replay_bubble_fraction + 0.1)
    mr.serial_caveat = fmt::format(
        "The devices took turns: the measured idle share {:.2f} sits at (p - 1)/p = {:.2f}, what {} devices working "
        "one at a time give for any m, far above the replay's {:.2f}. Here the devices are streams of one GPU (the "
        "notes say how their ops were launched), and their ops did not run side by side, so this measurement cannot "
        "show the schedule's bubble; the replay and the theory can",
        mr.bubble_fraction, taking_turns, s.devices(), mr.replay_bubble_fraction);
  return mr;
}

}  // namespace

RunResult run(const Lesson& lesson, const PipelineParams& params, RunContext& ctx, RunPlan& plan) {
  const Setup setup = setup_of(params);
  RunResult result = begin_result(lesson, ctx);
  const Simulated sim = simulate_setup(setup);
  const Schedule& s = sim.schedule;
  const OpCosts& c = sim.costs;
  const std::string title = schedule_title(setup.shape.kind);
  result.timelines.push_back(
      to_timeline(s, sim.timing, c, shape_title(setup.shape) + " (theory)", "theory", "simulated", "units"));

  plan.start(fmt::format("running {} for real: p = {}, m = {}", title, s.devices(), s.micro_batches()),
             s.micro_batches());
  const auto device = pipeline::make_pipeline_device(ctx.backend);
  const ExecutionResult r = device->execute(s, setup.executor, ctx.ledger, ctx.control);
  result.backend.emulated = device->emulated(r);
  result.backend.repeats = setup.executor.repeats;
  result.backend.timer = device->timer();
  for (std::string& note : device->notes(s, r)) result.backend.notes.push_back(std::move(note));
  result.measured = make_values(measured_of(*device, s, r, result.theory_as<PipelineTheory>()->bubble_fraction));

  result.timelines.push_back(to_timeline(
      s, r.timing, c, fmt::format("{} (measured, {})", shape_title(setup.shape), r.mode), "measured", r.mode, "us"));
  if (r.mode != "replayed") {
    result.timelines.push_back(to_timeline(s, r.replay, c,
                                           shape_title(setup.shape) + " (measured op times replayed, no waiting)",
                                           "theory", "simulated", "us"));
  } else {
    const OpCosts measured_costs = median_costs(r, c);
    result.timelines.push_back(to_timeline(s, simulate(s, measured_costs), measured_costs,
                                           shape_title(setup.shape) + " (theory with the median measured op times)",
                                           "theory", "simulated", "us"));
  }
  finish_result(result, ctx.ledger);
  return result;
}

std::vector<std::string> describe_span(const Schedule& s, const Timeline& timeline, int index, double p2p) {
  std::vector<std::string> lines;
  if (index < 0 || index >= static_cast<int>(timeline.spans.size())) return lines;
  const TimelineSpan& span = timeline.spans[index];
  if (span.lane < 0 || span.lane >= s.devices() || span.kind.empty()) return lines;
  const Op* op = nullptr;
  for (const Op& candidate : s.device_ops[span.lane])
    if (op_letter(candidate.kind) == span.kind[0] && candidate.micro_batch == span.micro_batch &&
        s.chunk_of(candidate.micro_batch, candidate.stage) == span.chunk)
      op = &candidate;
  if (op == nullptr) return {span.label + " (not in this schedule)"};
  const char* what = op->kind == OpKind::F   ? "forward"
                     : op->kind == OpKind::W ? "weight gradient (W), deferred from its B"
                     : op->split             ? "backward, input gradient only (its W comes later)"
                                             : "full backward (input and weight gradients)";
  std::string where = fmt::format("{}: {} of micro-batch {}, stage {} on device {}", span.label, what, op->micro_batch,
                                  op->stage, span.lane);
  if (s.chunks_per_device > 1) where += fmt::format(" (chunk {})", span.chunk);
  if (s.shape.kind == ScheduleKind::DualPipe)
    where += s.direction(op->micro_batch) == 0 ? ", entered at device 0" : ", entered at the last device";
  lines.push_back(where);
  lines.push_back(fmt::format("runs {:.4g} .. {:.4g} {} ({:.4g})", span.start, span.end, timeline.time_unit,
                              span.end - span.start));
  auto find = [&](const Op& o) -> const TimelineSpan* {
    const int lane = s.device_of(o.micro_batch, o.stage), chunk = s.chunk_of(o.micro_batch, o.stage);
    for (const TimelineSpan& t : timeline.spans)
      if (t.lane == lane && t.kind[0] == op_letter(o.kind) && t.micro_batch == o.micro_batch && t.chunk == chunk)
        return &t;
    return nullptr;
  };
  double ready = 0;
  std::string last_input;
  for (const Op& dep : dependencies(s, *op)) {
    const TimelineSpan* d = find(dep);
    if (d == nullptr) continue;
    const bool remote = d->lane != span.lane;
    const double arrival = d->end + (remote ? p2p : 0.0);
    lines.push_back(fmt::format("needs {} of stage {} on device {}: done at {:.4g}{}", d->label, dep.stage, d->lane,
                                d->end, remote && p2p > 0 ? fmt::format(", arrives at {:.4g}", arrival) : ""));
    if (arrival >= ready) {
      ready = arrival;
      last_input = fmt::format("{} from device {}", d->label, d->lane);
    }
  }
  if (lines.size() == 2) lines.push_back("needs nothing: the micro-batch's input is on this device");
  // The device was free from the end of the op before this one on the lane.
  double free_at = 0;
  std::string previous;
  for (const TimelineSpan& t : timeline.spans)
    if (t.lane == span.lane && t.end <= span.start + 1e-9 * std::max(1.0, span.start) && t.end >= free_at) {
      free_at = t.end;
      previous = t.label;
    }
  const double gap = span.start - free_at;
  const double eps = 1e-9 * std::max(1.0, span.end);
  if (gap <= eps)
    lines.push_back(previous.empty() ? "started at once" : "started as soon as the device finished " + previous);
  else if (ready >= span.start - eps)
    lines.push_back(fmt::format("waited {:.4g} {} for {}", gap, timeline.time_unit, last_input));
  else
    lines.push_back(
        fmt::format("idle {:.4g} {}: its input was there at {:.4g}, {:.4g} before it started (waking up, "
                    "copying, or the core was busy elsewhere)",
                    gap, timeline.time_unit, ready, span.start - ready));
  return lines;
}

std::string comparison_table(const PipelineTheory& theory) {
  std::string out =
      "comparison across schedules (same p, m and per-chunk costs; bubbles in units of one full-stage F + B, i.e.\n"
      "F + B of 1/p of the model, so smaller chunks compare fairly; bubble/ideal: idle over ideal compute time)\n";
  out += fmt::format("  {:<18} {:>7} {:>6} {:>6} {:>11} {:>11} {:>12} {:>10} {:>8} {:>9}  {}\n", "schedule", "devices",
                     "stages", "params", "bubble(fml)", "bubble(sim)", "bubble/ideal", "frac(sim)", "peak act",
                     "act(1/p)", "formula (" + theory.notation + " B)");
  for (const ScheduleComparison& e : theory.comparison) {
    if (!e.available) {
      out += fmt::format("  {:<18} not available: {}\n", e.title, e.why);
      continue;
    }
    out += fmt::format("  {:<18} {:>7} {:>6} {:>5}x {:>11} {:>11} {:>12} {:>10} {:>8} {:>9}  {}\n", e.title, e.devices,
                       e.stages, e.param_copies, format_number(e.bubble_stage_fb_formula, 4),
                       format_number(e.bubble_stage_fb_simulated, 4), format_number(e.bubble_ratio_simulated, 4),
                       format_number(e.bubble_fraction_simulated, 4), e.peak_inflight,
                       format_number(e.peak_activation_stage_units, 3), e.formula);
  }
  out +=
      "  bubble(fml): the closed form per device; bubble(sim): the worst device's idle time in the simulated\n"
      "  schedule, both over a full-stage F + B; frac: idle / (p x makespan); peak act: stashed (micro-batch,\n"
      "  chunk) pairs on the fullest device; act(1/p): the same in micro-batches through 1/p of the model.\n"
      "  Sources: GPipe, Megatron-LM (Narayanan et al. 2021), zero-bubble (Qi et al. 2024) and [EXT] DeepSeek-V3\n"
      "  Table 2 (exact for F = B = W).\n";
  return out;
}

std::string shape_title(const ScheduleShape& shape) {
  return fmt::format("{}: p = {}, m = {}{}", schedule_title(shape.kind), shape.devices, shape.micro_batches,
                     shape.kind == ScheduleKind::Interleaved ? fmt::format(", v = {}", shape.chunks) : "");
}

Timeline theory_timeline(const PipelineParams& params) {
  const Setup setup = setup_of(params);
  const Simulated sim = simulate_setup(setup);
  return to_timeline(sim.schedule, sim.timing, sim.costs, shape_title(setup.shape) + " (theory)", "theory", "simulated",
                     "units");
}

const char* waiting_overheads_cause(const std::string& backend_kind) {
  return backend_kind == "cuda" ? "launches, waits between streams, copies"
                                : "thread wake-up, copies, other processes on the cores";
}

std::string measurement_report(const RunResult& r) {
  const auto* m = r.measured_as<PipelineMeasured>();
  const auto* t = r.theory_as<PipelineTheory>();
  if (m == nullptr || t == nullptr) return {};
  const double theory = t->bubble_fraction;
  std::string out = fmt::format(
      "measured bubble fraction {:.4f} (median of {} steps, {} mode) vs theory {:.4f}: difference {:+.4f}\n",
      m->bubble_fraction, r.backend.repeats, m->mode, theory, m->bubble_fraction - theory);
  const bool replayed = m->mode == "replayed";
  if (m->bubble_gap_waiting)
    out += fmt::format(
        "  of which waiting overheads ({}): {:+.4f} = measured - replay of the same op times ({:.4f})\n  and uneven "
        "op times (stage imbalance, noise): {:+.4f} = replay - theory\n",
        waiting_overheads_cause(r.backend.kind), *m->bubble_gap_waiting, m->replay_bubble_fraction,
        m->bubble_gap_uneven_op_times);
  if (m->core_share)
    out += fmt::format("  the stage threads got {:.0f}% of a core while inside their ops{}\n", 100 * *m->core_share,
                       *m->core_share < 0.9 ? ": other processes shared the cores, stretching ops "
                                              "and the waits behind them"
                                            : "");
  else if (replayed)
    out += fmt::format(
        "  the replay has no waiting overheads: the difference comes from uneven measured op times "
        "(stage imbalance, noise)\n");
  out += fmt::format("  measured op times: F {}, full B {}, copy of one message {}\n", format_duration_us(m->f_us),
                     m->b_full_us ? format_duration_us(*m->b_full_us) : "-", format_duration_us(m->copy_us));
  if (m->serial_caveat) out += "  " + *m->serial_caveat + "\n";
  return out;
}

}  // namespace dlsys::pipeline_lesson
