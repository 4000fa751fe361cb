#pragma once
// The simulator: turns a schedule and op costs into a timeline. Every device runs its ops in the listed order, each
// as early as its device is free and its inputs have arrived (a forward needs the previous stage's forward, a
// backward its own forward and the next stage's backward, a W its B; a message between devices takes `p2p`).
// Also the legality checker, and what a timeline implies: idle time, bubble, activations in flight.
#include <functional>
#include <string>
#include <vector>

#include "kernels/pipeline/schedule.h"

namespace dlsys::pipeline {

// Op costs in any time unit. `b` is the input-gradient pass alone (the zero-bubble paper's B); a full backward costs
// b + w (the DeepSeek-V3 table's B). `fb`: a forward overlapped with a full backward of another micro-batch
// (DualPipe's F&B); 0 means no overlap gain, f + b + w.
struct OpCosts {
  double f = 1, b = 1, w = 1, fb = 0;
  double p2p = 0;                   // latency of one message between two devices
  std::vector<double> stage_scale;  // per model stage multiplier of f, b, w (empty: all 1)

  double scale(int stage) const;
  double full_backward() const { return b + w; }
  double pair() const { return fb > 0 ? fb : f + b + w; }
  double duration(const Op& op) const;
  // An overlapped pair: fb, shrunk or stretched with the stages' scales (the overlap saves the same fraction).
  double pair_duration(const Op& forward, const Op& backward) const;
};

struct TimedOp {
  Op op;
  int device = 0;
  double start = 0;
  double end = 0;             // a pair's two ops share start and end
  double inputs_ready = 0;    // when the last input arrived
  double device_free = 0;     // when the device finished its previous op
  int waited_on_device = -1;  // the device whose op arrived last, when the op waited for an input (else -1)
  Op waited_on;               // that op
};

struct Timing {
  std::vector<std::vector<TimedOp>> device_ops;  // same order as the schedule's lists
  double makespan = 0;
  std::vector<double> busy;  // per device: time spent computing (a pair counts once)

  double total_idle() const;
  // idle / (p x makespan): the share of all device time spent waiting.
  double bubble_fraction() const;
  // idle / busy: bubble time relative to the ideal compute time (Megatron's (p-1)/m for uniform stages).
  double bubble_ratio() const;
};

// What an op needs before it may start: the forward of the previous stage (F); its own forward and the backward of
// the next stage (B); its split backward (W).
std::vector<Op> dependencies(const Schedule& schedule, const Op& op);

// Durations per op: `duration(device, index in its list, op)`; for an op with `paired` set, `pair(device, index)`
// gives the pair's duration (index of the first op of the pair).
struct DurationModel {
  std::function<double(int, std::size_t, const Op&)> duration;
  std::function<double(int, std::size_t)> pair;
};
DurationModel cost_model(const Schedule& schedule, const OpCosts& costs);

// Throws std::logic_error when the op lists deadlock (some op waits for one that can never run).
Timing simulate(const Schedule& schedule, const DurationModel& durations, double p2p);
Timing simulate(const Schedule& schedule, const OpCosts& costs);

// Structural legality: every op on the device that holds its stage, every F and B exactly once, a W exactly for
// each split B, pairs well formed, and the lists run without deadlock. Returns the violations (empty = legal).
std::vector<std::string> check_schedule(const Schedule& schedule);
// Timing legality of a timeline (simulated or measured): F of stage s after F of s-1 (+ p2p between devices),
// B of s after B of s+1 and after its own F, W after its B, no op before its device finished the previous one.
std::vector<std::string> check_timing(const Schedule& schedule, const Timing& timing, double p2p,
                                      double tolerance = 1e-9);

// Fills inputs_ready, device_free and waited_on of a timeline whose start and end times were recorded (measured).
void annotate_waits(const Schedule& schedule, Timing& timing, double p2p);

// Activations in flight on a device: a micro-batch's stage activations live from its F until its full B, or until
// its W when the backward was split. Returns the step function as (time, count) points and its peak.
struct InFlight {
  std::vector<std::pair<double, int>> steps;
  int peak = 0;
};
InFlight in_flight(const Timing& timing, int device);
// The step function of a count from (time, +1 / -1) events; at equal times releases come first.
InFlight in_flight_from_events(std::vector<std::pair<double, int>> events);

}  // namespace dlsys::pipeline
