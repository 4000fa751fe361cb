// The simulator and legality checker (see simulate.h).
#include "kernels/pipeline/simulate.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace dlsys::pipeline {

std::vector<Op> dependencies(const Schedule& s, const Op& op) {
  std::vector<Op> deps;
  if (op.kind == OpKind::F) {
    if (op.stage > 0) deps.push_back({OpKind::F, op.micro_batch, op.stage - 1});
  } else if (op.kind == OpKind::B) {
    deps.push_back({OpKind::F, op.micro_batch, op.stage});
    if (op.stage + 1 < s.stages) deps.push_back({OpKind::B, op.micro_batch, op.stage + 1});
  } else {
    deps.push_back({OpKind::B, op.micro_batch, op.stage});
  }
  return deps;
}

namespace {

// End times of finished ops, indexed by (kind, micro-batch, stage).
class Finished {
 public:
  Finished(int micro_batches, int stages) : stages_(stages), end_(3 * std::size_t(micro_batches) * stages, -1.0) {}
  bool done(const Op& op) const { return end_[index(op)] >= 0; }
  double end(const Op& op) const { return end_[index(op)]; }
  void finish(const Op& op, double t) { end_[index(op)] = t; }

 private:
  std::size_t index(const Op& op) const {
    return (std::size_t(op.kind) * (end_.size() / 3 / stages_) + op.micro_batch) * stages_ + op.stage;
  }
  int stages_;
  std::vector<double> end_;
};

bool in_range(const Schedule& s, const Op& op) {
  return op.micro_batch >= 0 && op.micro_batch < s.micro_batches() && op.stage >= 0 && op.stage < s.stages;
}

}  // namespace

double OpCosts::scale(int stage) const {
  return stage >= 0 && stage < static_cast<int>(stage_scale.size()) ? stage_scale[stage] : 1.0;
}

double OpCosts::duration(const Op& op) const {
  const double base = op.kind == OpKind::F ? f : op.kind == OpKind::W ? w : op.split ? b : full_backward();
  return base * scale(op.stage);
}

double OpCosts::pair_duration(const Op& forward, const Op& backward) const {
  const double separate = duration(forward) + duration(backward);
  return pair() / (f + full_backward()) * separate;
}

double Timing::total_idle() const {
  double idle = 0;
  for (double b : busy) idle += makespan - b;
  return idle;
}

double Timing::bubble_fraction() const { return makespan > 0 ? total_idle() / (busy.size() * makespan) : 0.0; }

double Timing::bubble_ratio() const {
  double total_busy = 0;
  for (double b : busy) total_busy += b;
  return total_busy > 0 ? total_idle() / total_busy : 0.0;
}

DurationModel cost_model(const Schedule& schedule, const OpCosts& costs) {
  DurationModel model;
  model.duration = [costs](int, std::size_t, const Op& op) { return costs.duration(op); };
  model.pair = [costs, &schedule](int device, std::size_t index) {
    const Op& a = schedule.device_ops[device][index];
    const Op& b = schedule.device_ops[device][index + 1];
    return a.kind == OpKind::F ? costs.pair_duration(a, b) : costs.pair_duration(b, a);
  };
  return model;
}

Timing simulate(const Schedule& s, const DurationModel& durations, double p2p) {
  const int p = s.devices();
  Timing timing;
  timing.device_ops.resize(p);
  timing.busy.assign(p, 0.0);
  Finished finished(s.micro_batches(), s.stages);
  std::vector<std::size_t> next(p, 0);
  std::vector<double> device_free(p, 0.0);
  std::size_t remaining = s.op_count();

  // When `op` (on `device`) could start as far as its inputs go; false if an input is not computed yet.
  auto inputs_ready = [&](const Op& op, int device, double& ready, TimedOp& record) {
    ready = 0;
    for (const Op& dep : dependencies(s, op)) {
      if (!finished.done(dep)) return false;
      const int from = s.device_of(dep.micro_batch, dep.stage);
      const double arrival = finished.end(dep) + (from != device ? p2p : 0.0);
      if (arrival > ready) {
        ready = arrival;
        record.waited_on_device = from;
        record.waited_on = dep;
      }
    }
    return true;
  };

  while (remaining > 0) {
    bool progress = false;
    for (int d = 0; d < p; ++d) {
      const auto& ops = s.device_ops[d];
      while (next[d] < ops.size()) {
        const std::size_t i = next[d];
        const bool pair = ops[i].paired && i + 1 < ops.size();
        TimedOp first{ops[i], d}, second;
        double ready = 0, ready_second = 0;
        if (!inputs_ready(ops[i], d, ready, first)) break;
        if (pair) {
          second = TimedOp{ops[i + 1], d};
          if (!inputs_ready(ops[i + 1], d, ready_second, second)) break;
        }
        const double start = std::max({device_free[d], ready, ready_second});
        const double length = pair ? durations.pair(d, i) : durations.duration(d, i, ops[i]);
        for (TimedOp* t : {&first, pair ? &second : nullptr}) {
          if (t == nullptr) continue;
          t->inputs_ready = t == &first ? ready : ready_second;
          t->device_free = device_free[d];
          if (t->inputs_ready <= device_free[d]) t->waited_on_device = -1;
          t->start = start;
          t->end = start + length;
          finished.finish(t->op, t->end);
          timing.device_ops[d].push_back(*t);
        }
        device_free[d] = start + length;
        timing.busy[d] += length;
        timing.makespan = std::max(timing.makespan, start + length);
        const std::size_t taken = pair ? 2 : 1;
        next[d] += taken;
        remaining -= taken;
        progress = true;
      }
    }
    if (!progress) {
      std::string stuck;
      for (int d = 0; d < p; ++d)
        if (next[d] < s.device_ops[d].size())
          stuck += fmt::format(" device {} at {};", d, op_label(s.device_ops[d][next[d]]));
      throw std::logic_error("schedule deadlocks:" + stuck);
    }
  }
  return timing;
}

Timing simulate(const Schedule& schedule, const OpCosts& costs) {
  return simulate(schedule, cost_model(schedule, costs), costs.p2p);
}

std::vector<std::string> check_schedule(const Schedule& s) {
  std::vector<std::string> problems;
  const int m = s.micro_batches(), stages = s.stages;
  std::vector<int> count(3 * std::size_t(m) * stages, 0);
  std::vector<char> split(std::size_t(m) * stages, 0);
  auto at = [&](OpKind k, int mb, int st) -> int& { return count[(std::size_t(k) * m + mb) * stages + st]; };
  if (static_cast<int>(s.device_ops.size()) != s.devices()) problems.push_back("one op list per device expected");
  for (int d = 0; d < static_cast<int>(s.device_ops.size()); ++d) {
    const auto& ops = s.device_ops[d];
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      if (!in_range(s, op)) {
        problems.push_back(fmt::format("device {}: {} at stage {} is out of range", d, op_label(op), op.stage));
        continue;
      }
      if (s.device_of(op.micro_batch, op.stage) != d)
        problems.push_back(fmt::format("device {}: {} of stage {} belongs on device {}", d, op_label(op), op.stage,
                                       s.device_of(op.micro_batch, op.stage)));
      ++at(op.kind, op.micro_batch, op.stage);
      if (op.kind == OpKind::B && op.split) split[std::size_t(op.micro_batch) * stages + op.stage] = 1;
      if (op.paired) {
        const bool ok = i + 1 < ops.size() && !ops[i + 1].paired &&
                        ((op.kind == OpKind::F && ops[i + 1].kind == OpKind::B) ||
                         (op.kind == OpKind::B && ops[i + 1].kind == OpKind::F));
        if (!ok)
          problems.push_back(
              fmt::format("device {}: {} is paired but not followed by an F/B partner", d, op_label(op)));
      }
    }
  }
  for (int mb = 0; mb < m; ++mb)
    for (int st = 0; st < stages; ++st) {
      for (OpKind k : {OpKind::F, OpKind::B})
        if (at(k, mb, st) != 1)
          problems.push_back(
              fmt::format("{}{} of stage {} appears {} times (once expected)", op_letter(k), mb, st, at(k, mb, st)));
      const int expected_w = split[std::size_t(mb) * stages + st] ? 1 : 0;
      if (at(OpKind::W, mb, st) != expected_w)
        problems.push_back(fmt::format("W{} of stage {} appears {} times ({} expected: its B is {})", mb, st,
                                       at(OpKind::W, mb, st), expected_w, expected_w ? "split" : "a full backward"));
    }
  if (problems.empty()) {
    try {
      OpCosts unit;
      simulate(s, unit);
    } catch (const std::logic_error& e) {
      problems.push_back(e.what());
    }
  }
  return problems;
}

std::vector<std::string> check_timing(const Schedule& s, const Timing& timing, double p2p, double tolerance) {
  std::vector<std::string> problems;
  Finished finished(s.micro_batches(), s.stages);
  for (const auto& ops : timing.device_ops)
    for (const TimedOp& t : ops) finished.finish(t.op, t.end);
  for (int d = 0; d < static_cast<int>(timing.device_ops.size()); ++d) {
    const auto& ops = timing.device_ops[d];
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const TimedOp& t = ops[i];
      if (t.end < t.start - tolerance)
        problems.push_back(fmt::format("device {}: {} ends before it starts", d, op_label(t.op)));
      for (const Op& dep : dependencies(s, t.op)) {
        if (!finished.done(dep)) {
          problems.push_back(fmt::format("device {}: {} needs {} which never ran", d, op_label(t.op), op_label(dep)));
          continue;
        }
        const int from = s.device_of(dep.micro_batch, dep.stage);
        const double arrival = finished.end(dep) + (from != d ? p2p : 0.0);
        if (t.start < arrival - tolerance)
          problems.push_back(
              fmt::format("device {}: {} (stage {}) starts at {:.6g} before its input {} (stage {}, "
                          "device {}) arrives at {:.6g}",
                          d, op_label(t.op), t.op.stage, t.start, op_label(dep), dep.stage, from, arrival));
      }
      if (i > 0) {
        const TimedOp& prev = ops[i - 1];
        const bool pair = prev.op.paired && prev.start == t.start && prev.end == t.end;
        if (!pair && t.start < prev.end - tolerance)
          problems.push_back(fmt::format("device {}: {} starts at {:.6g} while {} runs until {:.6g}", d, op_label(t.op),
                                         t.start, op_label(prev.op), prev.end));
      }
    }
  }
  return problems;
}

void annotate_waits(const Schedule& s, Timing& timing, double p2p) {
  Finished finished(s.micro_batches(), s.stages);
  for (const auto& ops : timing.device_ops)
    for (const TimedOp& t : ops) finished.finish(t.op, t.end);
  for (int d = 0; d < static_cast<int>(timing.device_ops.size()); ++d) {
    double previous_end = 0;
    for (TimedOp& t : timing.device_ops[d]) {
      t.device_free = previous_end;
      t.inputs_ready = 0;
      t.waited_on_device = -1;
      for (const Op& dep : dependencies(s, t.op)) {
        if (!finished.done(dep)) continue;
        const int from = s.device_of(dep.micro_batch, dep.stage);
        const double arrival = finished.end(dep) + (from != d ? p2p : 0.0);
        if (arrival > t.inputs_ready) {
          t.inputs_ready = arrival;
          if (arrival > previous_end) {
            t.waited_on_device = from;
            t.waited_on = dep;
          }
        }
      }
      previous_end = std::max(previous_end, t.end);
    }
  }
}

InFlight in_flight(const Timing& timing, int device) {
  std::vector<std::pair<double, int>> events;
  for (const TimedOp& t : timing.device_ops[device]) {
    if (t.op.kind == OpKind::F)
      events.emplace_back(t.start, +1);
    else if (t.op.kind == OpKind::W || !t.op.split)
      events.emplace_back(t.end, -1);
  }
  return in_flight_from_events(std::move(events));
}

InFlight in_flight_from_events(std::vector<std::pair<double, int>> events) {
  // At equal times a release comes before an allocation: the memory is handed on, never held twice.
  std::sort(events.begin(), events.end());
  InFlight result;
  int current = 0;
  result.steps.emplace_back(0.0, 0);
  for (const auto& [time, delta] : events) {
    current += delta;
    result.peak = std::max(result.peak, current);
    if (result.steps.back().first == time)
      result.steps.back().second = current;
    else
      result.steps.emplace_back(time, current);
  }
  return result;
}

}  // namespace dlsys::pipeline
