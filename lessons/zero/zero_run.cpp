// The ZeRO lesson's run: the lab's stack trained on N CPU rank threads or GPU ranks at stages 0, 1, 2 and 3 in turn,
// each rank's ledger read against the paper's formulas, the links' byte counts against the ring's, and every stage's
// final weights against stage 0's.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/backend.h"
#include "engine/measure.h"
#include "kernels/precision/float_format.h"
#include "kernels/tensor/tp_layer.h"
#include "kernels/zero/zero_devices.h"
#include "kernels/zero/zero_memory.h"
#include "lessons/common/run_plan.h"
#include "lessons/zero/zero_lesson.h"

namespace dlsys {

namespace {

using zero_lesson::PeakBytes;
using zero_lesson::StageMeasured;
using zero_lesson::ZeroParams;

PeakBytes peak_of(const zero::RankPeakBytes& r) {
  return {r.weights, r.gradients, r.optimizer, r.activations, r.comm, r.workspace, r.model_states, r.total};
}

PeakBytes largest(const std::vector<PeakBytes>& all) {
  PeakBytes m;
  for (const PeakBytes& p : all) {
    m.weights = std::max(m.weights, p.weights);
    m.gradients = std::max(m.gradients, p.gradients);
    m.optimizer = std::max(m.optimizer, p.optimizer);
    m.activations = std::max(m.activations, p.activations);
    m.comm = std::max(m.comm, p.comm);
    m.workspace = std::max(m.workspace, p.workspace);
    m.model_states = std::max(m.model_states, p.model_states);
    m.total = std::max(m.total, p.total);
  }
  return m;
}

double max_rel_err(const std::vector<float>& w, const std::vector<float>& reference) {
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    worst = std::max(worst, std::abs(double(w[i]) - double(reference[i])));
    scale = std::max(scale, std::abs(double(reference[i])));
  }
  return scale > 0 ? worst / scale : worst;
}

bool bit_identical(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

StageMeasured measure_stage(const zero::ZeroConfig& config, const zero::ZeroTraining& t,
                            const std::vector<float>& stage0_weights) {
  StageMeasured m;
  m.stage = config.stage;
  const std::int64_t psi = training::parameter_count(config.shape);
  m.model_state_bytes_formula = zero::exact_model_state_bytes(config.stage, psi, config.ranks).total();
  m.model_states_match_formula = true;
  for (const zero::RankPeakBytes& r : t.peaks) {
    m.peak_by_rank.push_back(peak_of(r));
    m.model_states_match_formula &= r.model_states == m.model_state_bytes_formula;
  }
  m.peak_bytes_per_rank = largest(m.peak_by_rank);
  m.comm_bytes = t.comm_bytes_last_step.front();
  m.comm_elements = m.comm_bytes / std::int64_t(sizeof(float));
  // k collectives of Psi elements, each sending (N-1)/N of them per rank: exact, since N divides every layer.
  m.ring_comm_elements_formula = zero::collectives_per_step(config.stage) * psi / config.ranks * (config.ranks - 1);
  m.comm_matches_formula = true;
  for (std::int64_t bytes : t.comm_bytes_last_step)
    m.comm_matches_formula &= bytes == m.ring_comm_elements_formula * std::int64_t(sizeof(float));
  m.max_rel_err_vs_stage0 = max_rel_err(t.master_weights, stage0_weights);
  m.bit_identical_to_stage0 = bit_identical(t.master_weights, stage0_weights);
  const std::vector<double> timed(t.step_us.begin() + (t.step_us.size() > 1 ? 1 : 0), t.step_us.end());
  const TimingStats s = summarize_us(timed, "steady_clock");
  m.step_us = s.median_us;
  m.step_us_min = s.min_us;
  m.step_us_max = s.max_us;
  m.losses = t.losses;
  m.collectives_per_step = int(t.collectives.size());
  return m;
}

Timeline timeline_of(const zero::ZeroConfig& config, const zero::ZeroTraining& t) {
  Timeline tl;
  tl.name = fmt::format("stage {} (measured)", config.stage);
  tl.source = "measured";
  tl.mode = "emulated";
  for (int r = 0; r < config.ranks; ++r) tl.lanes.push_back(fmt::format("rank {}", r));
  for (const zero::RankSpan& s : t.spans) {
    TimelineSpan span;
    span.lane = s.rank;
    span.start = s.start_us;
    span.end = s.end_us;
    span.kind = s.kind;
    span.micro_batch = -1;
    const char* short_name = s.kind == "all_reduce"       ? "AR"
                             : s.kind == "reduce_scatter" ? "RS"
                             : s.kind == "all_gather"     ? "AG"
                             : s.kind == "optimizer"      ? "Adam"
                                                          : s.kind.c_str();
    span.label = s.layer >= 0 ? fmt::format("{}{}", short_name, s.layer) : std::string(short_name);
    tl.spans.push_back(span);
  }
  return tl;
}

Series bytes_series(const char* id, const std::string& name, const char* role) {
  return Series{id, name, role, "ZeRO stage", "", "model states per rank", "bytes", {}};
}

// Every stage at each swept N, one step each: the largest rank's model states from its ledger (measured) beside the
// formula at the same N (theory). Returns whether every rank matched the formula everywhere. Each N is a part of
// `plan` weighing its kMaxStage + 1 training steps.
template <typename Device>
bool sweep_ranks(const Device& device, const ZeroParams& p, RunPlan& plan, std::vector<Series>& out) {
  bool all_equal = true;
  std::vector<Series> measured(4), formula(4);
  for (int stage = 0; stage <= zero::kMaxStage; ++stage) {
    measured[std::size_t(stage)] = Series{fmt::format("states_vs_n_stage{}", stage),
                                          "ledger",
                                          "measured",
                                          "ranks N",
                                          "",
                                          "model states per rank",
                                          "bytes",
                                          {}};
    formula[std::size_t(stage)] = Series{fmt::format("states_formula_vs_n_stage{}", stage),
                                         fmt::format("stage {}", stage),
                                         "theory",
                                         "ranks N",
                                         "",
                                         "model states per rank",
                                         "bytes",
                                         {}};
  }
  const std::vector<int> ranks = zero_swept_ranks(p);
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    plan.start(fmt::format("N = {}: one step per stage", ranks[i]), zero::kMaxStage + 1);
    for (int stage = 0; stage <= zero::kMaxStage; ++stage) {
      zero::ZeroConfig config = zero_config(p, stage);
      config.ranks = ranks[i];
      config.steps = 1;
      const zero::ZeroTraining t = device.train(config).training;
      const std::int64_t expected =
          zero::exact_model_state_bytes(stage, training::parameter_count(config.shape), config.ranks).total();
      std::int64_t largest = 0;
      for (const zero::RankPeakBytes& r : t.peaks) {
        largest = std::max(largest, r.model_states);
        all_equal &= r.model_states == expected;
      }
      const double n = ranks[i];
      measured[std::size_t(stage)].points.push_back({n, double(largest), double(largest), double(largest)});
      formula[std::size_t(stage)].points.push_back({n, double(expected), double(expected), double(expected)});
    }
  }
  for (int stage = 0; stage <= zero::kMaxStage; ++stage) {
    out.push_back(std::move(formula[std::size_t(stage)]));
    out.push_back(std::move(measured[std::size_t(stage)]));
  }
  return all_equal;
}

// Model states and elements sent per rank against ZeRO stage: each measured beside its formula.
struct StageSeries {
  Series ledger = bytes_series("model_states_ledger", "model states per rank (ledger)", "measured");
  Series formula = bytes_series("model_states_formula", "model states per rank (formula)", "theory");
  Series comm{"comm_elements_measured",
              "elements sent per rank per step (links)",
              "measured",
              "ZeRO stage",
              "",
              "elements",
              "",
              {}};
  Series comm_formula{"comm_elements_formula", "k (N-1)/N Psi (ring)", "theory", "ZeRO stage", "", "elements", "", {}};

  void add(int stage, const StageMeasured& m) {
    const auto point = [&](Series& s, double y) { s.points.push_back({double(stage), y, y, y}); };
    point(ledger, double(m.peak_bytes_per_rank.model_states));
    point(formula, double(m.model_state_bytes_formula));
    point(comm, double(m.comm_elements));
    point(comm_formula, double(m.ring_comm_elements_formula));
  }
};

// Trains every stage on the chosen N, each held against stage 0, into `measured` (its timelines into `result`). Each
// stage is a part of `plan` weighing its p.steps training steps.
template <typename Device>
StageSeries train_every_stage(const Device& device, const ZeroParams& p, RunPlan& plan,
                              zero_lesson::ZeroMeasured& measured, RunResult& result) {
  StageSeries series;
  std::vector<float> stage0;
  for (int stage = 0; stage <= zero::kMaxStage; ++stage) {
    plan.start(fmt::format("stage {}: {} ranks train {} steps", stage, measured.ranks, p.steps), p.steps);
    const zero::ZeroConfig config = zero_config(p, stage);
    zero::RanksTrained trained = device.train(config);
    const zero::ZeroTraining& t = trained.training;
    measured.placement = std::move(trained.placement);
    if (stage == 0) stage0 = t.master_weights;
    if (stage == 0 && Device::kOnGpu)  // the GPU's stage 0 against the CPU's: the same math, cuBLAS's summation order
      measured.max_rel_err_gpu_vs_cpu_stage0 =
          max_rel_err(t.master_weights, zero::train_sharded(config).master_weights);
    StageMeasured m = measure_stage(config, t, stage0);
    result.timelines.push_back(timeline_of(config, t));
    series.add(stage, m);
    measured.parameters = training::parameter_count(config.shape);
    measured.stages.push_back(std::move(m));
  }
  return series;
}

// The chosen stage's numbers at the top level, and whether every stage matched its formula and stage 0.
void summarize_chosen_stage(zero_lesson::ZeroMeasured& measured) {
  const StageMeasured& chosen = measured.stages.at(std::size_t(measured.stage));
  measured.peak_bytes_per_rank = chosen.peak_bytes_per_rank;
  measured.comm_bytes = chosen.comm_bytes;
  measured.max_rel_err_vs_stage0 = chosen.max_rel_err_vs_stage0;
  measured.all_stages_match_formula = true;
  measured.all_stages_bit_identical = true;
  for (const StageMeasured& s : measured.stages) {
    measured.all_stages_match_formula &= s.model_states_match_formula;
    measured.all_stages_bit_identical &= s.bit_identical_to_stage0;
  }
}

// Whether the ranks were emulated and how they ran, then what every device's links count.
template <typename Device>
void add_backend_notes(const Device& device, RunResult& result, const zero_lesson::ZeroMeasured& measured) {
  result.backend.emulated = device.ranks_emulated(measured.ranks);
  for (std::string& note : device.notes(measured.ranks, measured.placement))
    result.backend.notes.push_back(std::move(note));
  result.backend.notes.push_back("16-bit values travel widened to fp32 (exactly): the links count 4 B an element");
}

// The run's memory is each rank's own ledger: the chosen stage's, by tag (all freed by now), ranks 0-3 (the JSON
// has every rank's).
void add_rank_ledgers(RunResult& result) {
  const auto* kept = result.measured_as<zero_lesson::ZeroMeasured>();
  const StageMeasured& shown = kept->stages.at(std::size_t(kept->stage));
  for (std::size_t r = 0; r < shown.peak_by_rank.size() && r < 4; ++r) {
    const PeakBytes& b = shown.peak_by_rank[r];
    for (const auto& [tag, bytes] : {std::pair<const char*, std::int64_t>{"weights", b.weights},
                                     {"gradients", b.gradients},
                                     {"optimizer", b.optimizer},
                                     {"activations", b.activations},
                                     {"comm", b.comm},
                                     {"workspace", b.workspace}})
      result.memory.push_back({fmt::format("rank {} {}", r, tag), 0, bytes});
    result.memory_peak_bytes = std::max(result.memory_peak_bytes, b.total);
  }
}

// Every stage trained on `device` at the chosen N, then one step of every stage at each swept N.
template <typename Device>
void train_on(const Device& device, const ZeroParams& p, RunContext& ctx, RunResult& result) {
  result.backend.timer = Device::kTimer;
  result.backend.repeats = p.steps;
  const tensor::SingleThreadedBlas blas(zero_swept_ranks(p).back());  // the most rank threads any training starts
  zero_lesson::ZeroMeasured measured;
  measured.stage = p.stage;
  measured.ranks = p.n;
  measured.dtype = precision::layout_of(p.dtype).name;
  measured.on_gpu = Device::kOnGpu;
  measured.swept_ranks = zero_swept_ranks(p);
  // In training steps: every stage at the chosen N, then one step of every stage at each swept N.
  RunPlan plan(ctx.control, (zero::kMaxStage + 1) * double(p.steps + measured.swept_ranks.size()));
  StageSeries series = train_every_stage(device, p, plan, measured, result);
  summarize_chosen_stage(measured);
  result.series = {series.ledger, series.formula, series.comm, series.comm_formula};
  measured.sweep_matches_formula = sweep_ranks(device, p, plan, result.series);
  add_backend_notes(device, result, measured);
  result.measured = make_values(std::move(measured));
  plan.finish();
}

}  // namespace

RunResult ZeroLesson::run_with(const ZeroParams& p, RunContext& ctx) const {
  RunResult result = begin_result(*this, ctx);
  if (p.mode == zero_lesson::Mode::Theory) {
    result.backend.notes.push_back("calculator only: every number comes from the formulas; nothing ran");
    finish_result(result, ctx.ledger);
    return result;
  }
  if (ctx.backend == BackendKind::Cuda)
    train_on(zero::CudaZero(), p, ctx, result);
  else
    train_on(zero::CpuZero(), p, ctx, result);
  finish_result(result, ctx.ledger);
  add_rank_ledgers(result);
  return result;
}

}  // namespace dlsys
