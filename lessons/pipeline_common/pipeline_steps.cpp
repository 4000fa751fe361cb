#include "lessons/pipeline_common/pipeline_steps.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <stdexcept>

#include "engine/errors.h"
#include "kernels/pipeline/bubble_theory.h"

namespace dlsys::pipeline_lesson {

namespace {

// What a panel changes in the chosen parameters (none for the chosen schedule itself).
using Override = std::function<void(PipelineParams&)>;
constexpr int kInFlightPoints = 400;
constexpr int kMaxDevicesPlotted = 6;
constexpr int kMaxMessagesDrawn = 4000;

InFlightCurve in_flight_curve(const Timeline& timeline, int lane, double end) {
  const pipeline::InFlight f = in_flight_from_timeline(timeline, lane);
  InFlightCurve curve{fmt::format("{}: peak {}", timeline.lanes[lane], f.peak), {}};
  auto step_to = [&](double t, double count) {
    if (!curve.points.empty()) {
      const double prev = curve.points.back().y;
      curve.points.push_back({t, prev, prev, prev});
    }
    curve.points.push_back({t, count, count, count});
  };
  if (f.steps.size() <= 2 * kInFlightPoints || end <= 0) {
    for (const auto& [t, count] : f.steps) step_to(t, count);
    return curve;
  }
  int current = 0;
  std::size_t i = 0;
  for (int b = 0; b < kInFlightPoints; ++b) {
    const double bucket_end = end * (b + 1) / kInFlightPoints;
    int peak = current;
    for (; i < f.steps.size() && f.steps[i].first < bucket_end; ++i) {
      current = f.steps[i].second;
      peak = std::max(peak, current);
    }
    step_to(end * b / kInFlightPoints, peak);
  }
  return curve;
}

void add_in_flight(SchedulePanel& panel) {
  const Timeline& timeline = panel.timeline;
  double end = 0;
  for (const auto& span : timeline.spans) end = std::max(end, span.end);
  const int lanes = static_cast<int>(timeline.lanes.size());
  panel.peaks_text = "peak in flight per device:";
  for (int lane = 0; lane < lanes; ++lane) {
    panel.peaks_text += fmt::format(" {}", in_flight_from_timeline(timeline, lane).peak);
    // Past six devices the staircases hide each other: the first, the middle and the last device.
    if (lanes <= kMaxDevicesPlotted || lane == 0 || lane == lanes / 2 || lane == lanes - 1)
      panel.in_flight.push_back(in_flight_curve(timeline, lane, end));
  }
}

std::vector<int> peaks_of(const SchedulePanel& panel) {
  std::vector<int> peaks;
  for (int lane = 0; lane < static_cast<int>(panel.timeline.lanes.size()); ++lane)
    peaks.push_back(in_flight_from_timeline(panel.timeline, lane).peak);
  return peaks;
}

std::map<std::string, std::vector<LaneBand>> phase_bands(const SchedulePanel& panel) {
  std::map<std::string, std::vector<LaneBand>> bands;
  for (int d = 0; d < static_cast<int>(panel.phases.size()); ++d) {
    const DevicePhases& ph = panel.phases[d];
    bands["warmup"].push_back({d, 0, ph.warmup_end});
    bands["steady_state"].push_back({d, ph.warmup_end, ph.steady_end});
    bands["cooldown"].push_back({d, ph.steady_end, ph.end});
  }
  return bands;
}

SchedulePanel simulate_panel(const PipelineParams& params, const Override& override_params) {
  SchedulePanel panel;
  try {
    PipelineParams changed = params;
    if (override_params) override_params(changed);
    panel.setup = setup_of(changed);
    panel.title = pipeline::schedule_title(panel.setup.shape.kind);
    panel.sim = std::make_shared<const Simulated>(simulate_setup(panel.setup));
    const pipeline::ScheduleShape& shape = panel.setup.shape;
    panel.timeline = to_timeline(panel.sim->schedule, panel.sim->timing, panel.sim->costs,
                                 shape_title(shape) + " (theory)", "theory", "simulated", "units");
    add_in_flight(panel);
    panel.phases = device_phases(panel.sim->schedule, panel.sim->timing);
    auto messages = messages_of(panel.sim->schedule, panel.sim->timing, panel.sim->costs.p2p);
    panel.message_count = static_cast<int>(messages.size());
    if (panel.message_count <= kMaxMessagesDrawn) panel.messages = std::move(messages);
  } catch (const BadInput& e) {
    panel.error = e.what();
  }
  return panel;
}

Series curve_against_m(std::string id, std::string name, const std::function<double(int)>& y) {
  Series s{std::move(id), std::move(name), "theory", "m (micro-batches)", "", "idle / (p x makespan)", "", {}};
  for (int m = 1; m <= 64; ++m) s.points.push_back({double(m), y(m), y(m), y(m)});
  return s;
}

BubbleFormulas bubble_formulas(int p, int m) {
  using namespace pipeline::theory;
  BubbleFormulas f{.p = p,
                   .m = m,
                   .one_micro_batch = fill_drain_idle_fraction(p, 1),
                   .fill_drain = fill_drain_idle_fraction(p, m),
                   .ratio = bubble_ratio(p, m),
                   .course_m1 = fill_drain_idle_fraction(2, 1),
                   .course_m4 = fill_drain_idle_fraction(2, 4),
                   .course_m10 = fill_drain_idle_fraction(2, 10),
                   .misprint = course_misprint(p, m)};
  for (int devices : {p, 2, 4, 8})
    if (devices == p ? f.fill_drain_curves.empty() : devices != p)
      f.fill_drain_curves.push_back(curve_against_m(fmt::format("fill_drain_p{}", devices),
                                                    fmt::format("p = {}", devices),
                                                    [&](int mm) { return fill_drain_idle_fraction(devices, mm); }));
  f.misprint_curve =
      curve_against_m("course_misprint", "misprint (1-m)/(m+n-1)", [&](int mm) { return course_misprint(p, mm); });
  return f;
}

}  // namespace

const SchedulePanel& PipelineSteps::panel(const std::string& name) const {
  const auto it = panels.find(name);
  if (it == panels.end()) throw std::logic_error("no schedule panel named '" + name + "'");
  return it->second;
}

bool PipelineSteps::ran_chosen_schedule(const RunResult& run) const {
  const auto* run_theory = run.theory_as<PipelineTheory>();
  return run_theory != nullptr && run_theory->schedule == pipeline::schedule_id(chosen_schedule);
}

namespace {

Override with_schedule(pipeline::ScheduleKind kind, int m = 0, int p = 0) {
  return [=](PipelineParams& params) {
    params.schedule = kind;
    if (m > 0) params.m = m;
    if (p > 0) params.p = p;
  };
}

// A cost divided by v, as a parameter written with ten significant digits.
void divide_cost(double& cost, std::string* text, int v) {
  const std::string written = fmt::format("{:.10g}", cost / v);
  cost = std::stod(written);
  if (text != nullptr) *text = written;
}

// Interleaving: the same model, each chunk 1/v of a stage, so its ops cost 1/v as much; m a multiple of p.
void add_interleaving(PipelineSteps& steps, const PipelineParams& params) {
  const SchedulePanel& base = steps.panel("1f1b");
  if (!base.error.empty()) return;
  const int devices = base.setup.shape.devices, v = base.setup.chunks;
  steps.interleaved_m = (base.setup.shape.micro_batches + devices - 1) / devices * devices;
  steps.messages_per_micro_batch_1f1b = 2 * (devices - 1);
  steps.messages_per_micro_batch_interleaved = 2 * (v * devices - 1);
  steps.formulas.interleaved_ratio_1f1b = pipeline::theory::bubble_ratio(devices, steps.interleaved_m);
  steps.formulas.interleaved_ratio = pipeline::theory::bubble_ratio(devices, steps.interleaved_m, v);
  const int m = steps.interleaved_m;
  steps.panels.emplace("interleaved", simulate_panel(params, [&](PipelineParams& p) {
                         with_schedule(pipeline::ScheduleKind::Interleaved, m)(p);
                         divide_cost(p.f, nullptr, v);
                         divide_cost(p.b, &p.b_text, v);
                         divide_cost(p.w, &p.w_text, v);
                         divide_cost(p.fb, &p.fb_text, v);
                       }));
  steps.panels.emplace("1f1b_interleaved_m",
                       simulate_panel(params, with_schedule(pipeline::ScheduleKind::OneFOneB, m)));
}

}  // namespace

std::shared_ptr<const PipelineSteps> make_pipeline_steps(const PipelineParams& params, bool comparisons) {
  using pipeline::ScheduleKind;
  auto steps = std::make_shared<PipelineSteps>();
  steps->chosen_schedule = params.schedule;
  auto add = [&](const std::string& name, const Override& override_params) {
    steps->panels.emplace(name, simulate_panel(params, override_params));
  };
  add("chosen", {});
  add("gpipe_m1", with_schedule(ScheduleKind::GPipe, 1));
  if (const SchedulePanel& chosen = steps->panel("chosen"); chosen.error.empty())
    steps->schedule = std::shared_ptr<const pipeline::Schedule>(chosen.sim, &chosen.sim->schedule);
  const int p = params.p, m = params.m;
  steps->formulas = bubble_formulas(p, m);
  try {
    steps->theory = pipeline_lesson::theory_of(params);
  } catch (const BadInput& e) {
    steps->theory_error = e.what();
  }
  if (const SchedulePanel& chosen = steps->panel("chosen"); chosen.error.empty())
    steps->phase_bands = phase_bands(chosen);
  if (!comparisons) return steps;
  add("gpipe", with_schedule(ScheduleKind::GPipe));
  add("1f1b", with_schedule(ScheduleKind::OneFOneB));
  if (const SchedulePanel& g = steps->panel("gpipe"), &o = steps->panel("1f1b"); g.error.empty() && o.error.empty()) {
    for (const SchedulePanel* panel : {&g, &o}) {
      for (int peak : peaks_of(*panel)) steps->in_flight_max = std::max(steps->in_flight_max, double(peak));
      steps->in_flight_time_max = std::max(steps->in_flight_time_max, panel->sim->timing.makespan);
    }
  }
  add("zb_h1", with_schedule(ScheduleKind::ZbH1));
  add_interleaving(*steps, params);
  // DualPipe needs an even p and m >= 2p (and even).
  steps->dualpipe_p = p + p % 2;
  steps->dualpipe_m = std::max(m + m % 2, 2 * steps->dualpipe_p);
  add("dualpipe", with_schedule(ScheduleKind::DualPipe, steps->dualpipe_m, steps->dualpipe_p));
  add("1f1b_dualpipe", with_schedule(ScheduleKind::OneFOneB, steps->dualpipe_m, steps->dualpipe_p));
  return steps;
}

}  // namespace dlsys::pipeline_lesson
