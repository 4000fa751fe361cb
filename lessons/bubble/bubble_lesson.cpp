#include "lessons/bubble/bubble_lesson.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/errors.h"
#include "engine/host_memory.h"
#include "engine/units.h"
#include "kernels/pipeline/bubble_theory.h"
#include "kernels/pipeline/pipeline_devices.h"
#include "lessons/common/run_time_limit.h"
#include "lessons/pipeline_common/pipeline_lesson.h"
#include "lessons/pipeline_common/pipeline_steps.h"
#include "lessons/run_file.h"

namespace dlsys {

using namespace pipeline;
using pipeline_lesson::PipelineParams;

namespace {

// The sweep's m values that the chosen schedule can run (interleaved needs multiples of p, DualPipe m >= 2p).
std::vector<int> sweep_points(const PipelineParams& params, const pipeline_lesson::Setup& setup,
                              std::vector<int>* skipped) {
  std::vector<int> points;
  for (int m : params.sweep) {
    ScheduleShape shape = setup.shape;
    shape.micro_batches = m;
    try {
      check_shape(shape);
      points.push_back(shape.micro_batches);
    } catch (const BadInput&) {
      if (skipped) skipped->push_back(shape.micro_batches);
    }
  }
  return points;
}

Series theory_series(std::string id, std::string name, const std::vector<int>& ms,
                     const std::function<double(int)>& y) {
  Series s{std::move(id),     std::move(name),         "theory", "m (micro-batches)", "",
           "bubble fraction", "idle / (p x makespan)", {}};
  for (int m : ms) {
    const double v = y(m);
    s.points.push_back({double(m), v, v, v});
  }
  return s;
}

// How far each measured point of the sweep sits from the schedule's own prediction with these costs, in one
// sentence: which m agree within kSweepTolerance, and for those that do not, what dominated the gap. The replay of
// the same step's measured op times tells the two causes apart: uneven op times (replay above the prediction: a
// slower stage or core, noise in the ops) or waiting (measurement above its replay: wake-ups, copies, other programs).
constexpr double kSweepTolerance = 0.05;

std::string sweep_agreement_note(const Series& measured, const std::vector<double>& predicted,
                                 const std::vector<double>& replayed) {
  std::string agree, misses;
  for (std::size_t i = 0; i < measured.points.size(); ++i) {
    const double m = measured.points[i].x, y = measured.points[i].y, gap = y - predicted[i];
    if (std::fabs(gap) <= kSweepTolerance) {
      agree += fmt::format("{}{:g}", agree.empty() ? "" : ", ", m);
      continue;
    }
    const double uneven = replayed[i] - predicted[i], waiting = y - replayed[i];
    misses += fmt::format(
        "; m = {:g} is {:+.3f} off: {}", m, gap,
        std::fabs(uneven) >= std::fabs(waiting)
            ? fmt::format("uneven op times ({:+.3f}: its ops replayed without waiting give {:.3f}; the stages' cores "
                          "did not run at one steady speed)",
                          uneven, replayed[i])
            : fmt::format("waiting ({:+.3f} over the replay of its own op times: thread wake-ups, copies, other "
                          "programs on the cores)",
                          waiting));
  }
  return fmt::format("sweep against the schedule's prediction (tolerance {:g}): {}{}", kSweepTolerance,
                     agree.empty() ? "no m within it" : "m = " + agree + " within it", misses);
}

}  // namespace

std::vector<ParamSpec> BubbleLesson::params() const {
  auto specs = pipeline_lesson::param_specs({.schedule = "gpipe", .p = 2, .m = 4});
  specs.push_back({.key = "sweep",
                   .label = "m sweep",
                   .type = ParamType::SizeList,
                   .default_text = "1,2,3,4,6,8,12,16,24,32",
                   .min = 1,
                   .max = 256,
                   .help = "micro-batch counts for the measured-bubble-against-m plot"});
  return specs;
}

void BubbleLesson::check_params(const PipelineParams& params, BackendKind) const {
  const auto setup = pipeline_lesson::setup_of(params);  // the base's checks

  if (sweep_points(params, setup, nullptr).empty())
    throw BadInput(
        fmt::format("parameter 'sweep': value '{}' is not allowed: no m in it can run schedule '{}' with "
                    "p = {}; allowed: m that the schedule accepts",
                    params.sweep_text, schedule_id(params.schedule), setup.shape.devices));
}

void BubbleLesson::check_run(const PipelineParams& params, BackendKind backend) const {
  const auto setup = pipeline_lesson::setup_of(params);
  PipelineTypedLesson::check_run(params, backend);
  const auto points = sweep_points(params, setup, nullptr);
  ScheduleShape largest = setup.shape;
  largest.micro_batches = *std::max_element(points.begin(), points.end());
  const std::int64_t need = estimate_executor_bytes(make_schedule(largest), setup.executor);
  const HostMemory host = host_memory();
  if (!host.fits(double(need)))
    throw BadInput(
        fmt::format("parameter 'sweep': m = {} would need up to {} of host memory but only {} is "
                    "available; lower the sweep, hidden or microbatch",
                    largest.micro_batches, format_bytes_both(double(need)), format_bytes_both(host.free_bytes)));
}

RunBudget BubbleLesson::budget_of(const PipelineParams& params, BackendKind backend) const {
  if (backend != BackendKind::Cpu) return {};
  const auto setup = pipeline_lesson::setup_of(params);
  const auto points = sweep_points(params, setup, nullptr);
  double seconds = pipeline_lesson::cpu_run_seconds(setup, setup.shape.micro_batches);
  for (int m : points) seconds += pipeline_lesson::cpu_run_seconds(setup, m);
  return {
      .cpu_seconds = seconds,
      .max_minutes = params.max_minutes,
      .cpu_work = fmt::format("the run and {} sweep points: {}", points.size(), pipeline_lesson::cpu_run_work(setup)),
      .smaller = "hidden, microbatch, m, p, repeats or sweep"};
}

RunResult BubbleLesson::run_with(const PipelineParams& params, RunContext& ctx) const {
  const auto setup = pipeline_lesson::setup_of(params);
  std::vector<int> skipped;
  const auto ms = sweep_points(params, setup, &skipped);
  // Every run weighs its micro-batch count: the main run, then one per sweep point.
  RunPlan plan(ctx.control, std::accumulate(ms.begin(), ms.end(), double(setup.shape.micro_batches)));
  RunResult result = pipeline_lesson::run(*this, params, ctx, plan);
  const int p = setup.shape.devices;
  if (!skipped.empty()) {
    std::string list;
    for (int m : skipped) list += (list.empty() ? "" : ", ") + std::to_string(m);
    result.backend.notes.push_back(fmt::format("sweep skips m = {}: schedule {} cannot run them with p = {}", list,
                                               schedule_id(params.schedule), p));
  }

  // The measured bubble against m. Its own ledger: the result's memory report stays that of the main run.
  Series measured{"measured",
                  fmt::format("measured ({}, {})", schedule_title(setup.shape.kind),
                              result.measured_as<pipeline_lesson::PipelineMeasured>()->mode),
                  "measured",
                  "m (micro-batches)",
                  "",
                  "bubble fraction",
                  "idle / (p x makespan)",
                  {}};
  std::vector<double> simulated, replayed;
  const auto device = pipeline::make_pipeline_device(ctx.backend);
  for (std::size_t i = 0; i < ms.size(); ++i) {
    plan.start(fmt::format("sweep: m = {}", ms[i]), ms[i]);
    ScheduleShape shape = setup.shape;
    shape.micro_batches = ms[i];
    const Schedule s = make_schedule(shape);
    MemoryLedger sweep_ledger;
    const ExecutionResult r = device->execute(s, setup.executor, sweep_ledger, ctx.control);
    const auto [lo, hi] = std::minmax_element(r.step_bubble_fractions.begin(), r.step_bubble_fractions.end());
    measured.points.push_back({double(ms[i]), r.timing.bubble_fraction(), *lo, *hi});
    replayed.push_back(r.replay.bubble_fraction());
    OpCosts costs = setup.costs;
    if (!costs.stage_scale.empty()) {
      const double heavy = costs.stage_scale.back();
      costs.stage_scale.assign(s.stages, 1.0);
      costs.stage_scale.back() = heavy;
    }
    simulated.push_back(simulate(s, costs).bubble_fraction());
  }
  result.backend.notes.push_back(sweep_agreement_note(measured, simulated, replayed));
  result.series.push_back(std::move(measured));
  result.series.push_back(theory_series("fill_drain_theory", "(p-1)/(m+p-1): GPipe, 1F1B", ms,
                                        [&](int m) { return theory::fill_drain_idle_fraction(p, m); }));
  bool differs = false;
  for (std::size_t i = 0; i < ms.size(); ++i)
    differs = differs || std::fabs(simulated[i] - theory::fill_drain_idle_fraction(p, ms[i])) > 1e-12;
  if (differs) {
    std::size_t i = 0;
    result.series.push_back(
        theory_series("simulated", fmt::format("simulated {} with these costs", schedule_title(setup.shape.kind)), ms,
                      [&](int) { return simulated[i++]; }));
  }
  result.series.push_back(theory_series("course_misprint", "course misprint (1-m)/(m+n-1): never a share", ms,
                                        [&](int m) { return theory::course_misprint(p, m); }));
  plan.finish();
  return result;
}

std::string BubbleLesson::text_report(const RunResult& result) const {
  std::string out = pipeline_lesson::measurement_report(result);
  const Series* measured = nullptr;
  for (const auto& s : result.series)
    if (s.role == "measured") measured = &s;
  const int p = read_params(recorded_params(*this, result)).p;
  if (measured != nullptr) {
    out += fmt::format("bubble fraction against m (p = {}):\n  {:>4}  {:>9}  {:>9}  {:>9}  {:>10}\n", p, "m",
                       "measured", "formula", "diff", "misprint");
    for (const auto& pt : measured->points) {
      const int m = static_cast<int>(pt.x);
      const double formula = theory::fill_drain_idle_fraction(p, m);
      out += fmt::format("  {:>4}  {:>9.4f}  {:>9.4f}  {:>+9.4f}  {:>10.4f}\n", m, pt.y, formula, pt.y - formula,
                         theory::course_misprint(p, m));
    }
  }
  return out + pipeline_lesson::comparison_table(*result.theory_as<pipeline_lesson::PipelineTheory>());
}

std::shared_ptr<const pipeline_lesson::PipelineSteps> BubbleLesson::step_data_of(const PipelineParams& params) const {
  return pipeline_lesson::make_pipeline_steps(params, false);
}

}  // namespace dlsys
