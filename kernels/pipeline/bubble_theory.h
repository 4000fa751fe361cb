#pragma once
// Closed forms for pipeline bubbles, exact for uniform stages and no message latency. Two normalisations of the
// same idle time are in use (Huang et al., GPipe, 2019; Narayanan et al., Megatron-LM, 2021):
//   idle fraction  = idle / (p x makespan)       GPipe: (p-1)/(m+p-1)   ("the percentage of idle")
//   bubble ratio   = idle / ideal compute time   Megatron-LM: (p-1)/m   ("bubble time fraction")
// The course text prints (1-m)/(m+n-1); that is never positive, see course_misprint().
#include <algorithm>

#include "kernels/pipeline/schedule.h"
#include "kernels/pipeline/simulate.h"

namespace dlsys::pipeline::theory {

// GPipe and 1F1B (PipeDream-Flush): each device is busy m slots out of m + p - 1.
inline double fill_drain_idle_fraction(int p, int m) { return double(p - 1) / double(m + p - 1); }
// The formula as the course prints it (001 section 5.1.2): zero at m = 1 and negative beyond, so it cannot be a share.
inline double course_misprint(int n_gpus, int m) { return double(1 - m) / double(m + n_gpus - 1); }
// Megatron-LM (Narayanan et al. 2021): bubble time over ideal compute, (p-1)/m, and with v chunks (p-1)/(v m).
inline double bubble_ratio(int p, int m, int v = 1) { return double(p - 1) / double(v * m); }
// The same idle time as a share of p x makespan with v chunks: (p-1)/(v m + p - 1).
inline double interleaved_idle_fraction(int p, int m, int v) { return double(p - 1) / double(v * m + p - 1); }
// Activations in flight on rank r (micro-batches stashed): GPipe keeps all m, 1F1B at most p - r.
inline int peak_inflight_gpipe(int m) { return m; }
inline int peak_inflight_1f1b(int p, int m, int rank) { return std::min(p - rank, m); }

// [EXT] DeepSeek-V3 technical report, Table 2 (also the DualPipe README). Per-device bubble time with
// F = forward chunk, B = FULL backward chunk, W = weight-gradient chunk, FB = an overlapped forward + backward pair.
inline double deepseek_1f1b_bubble(int pp, double F, double B) { return (pp - 1) * (F + B); }
inline double deepseek_zb1p_bubble(int pp, double F, double B, double W) { return (pp - 1) * (F + B - 2 * W); }
inline double deepseek_dualpipe_bubble(int pp, double FB, double B, double W) {
  return (pp / 2 - 1) * (FB + B - 3 * W);
}
// Parameter copies and activations (in micro-batch x stage units) of the same table.
inline int deepseek_param_copies(ScheduleKind kind) { return kind == ScheduleKind::DualPipe ? 2 : 1; }
inline int deepseek_activation(ScheduleKind kind, int pp) { return kind == ScheduleKind::DualPipe ? pp + 1 : pp; }

// The zero-bubble paper writes B for the input gradient alone; DeepSeek's B is the full backward, B_zb + W.
inline double full_backward_from_zb(double b_input, double w) { return b_input + w; }

// The closed form that belongs to each schedule, for costs given per chunk (OpCosts: b = input gradient alone).
struct FormulaBubble {
  double bubble = 0;          // per-device bubble time (for DualPipe(V): the worst device)
  double ideal = 0;           // per-device compute time with no bubble (0 where devices differ: DualPipe(V))
  double idle_fraction = -1;  // bubble / (ideal + bubble), -1 where the table gives no makespan
  double ratio = -1;          // bubble / ideal
  const char* source = "";
};
inline FormulaBubble formula_bubble(ScheduleKind kind, int p, int m, int v, const OpCosts& c) {
  const double F = c.f, B = c.full_backward(), W = c.w;
  FormulaBubble out;
  switch (kind) {
    case ScheduleKind::GPipe:
    case ScheduleKind::OneFOneB:
      out = {deepseek_1f1b_bubble(p, F, B), m * (F + B), 0, 0, "(p-1)(F+B): GPipe; Megatron-LM; DeepSeek-V3 Table 2"};
      break;
    case ScheduleKind::Interleaved:
      out = {deepseek_1f1b_bubble(p, F, B), v * m * (F + B), 0, 0,
             "(p-1)(F+B) per chunk = (p-1)/(v m) of ideal: Megatron-LM"};
      break;
    case ScheduleKind::ZbH1:
      out = {deepseek_zb1p_bubble(p, F, B, W), m * (F + B), 0, 0,
             "(p-1)(F+B-2W): ZB paper; DeepSeek-V3 Table 2 (ZB1P)"};
      break;
    case ScheduleKind::DualPipe:
      out = {deepseek_dualpipe_bubble(p, c.pair(), B, W), 0, -1, -1, "(p/2-1)(F&B+B-3W): DeepSeek-V3 Table 2"};
      break;
    case ScheduleKind::DualPipeV:
      out = {deepseek_dualpipe_bubble(2 * p, c.pair(), B, W), 0, -1, -1,
             "(p-1)(F&B+B-3W): DualPipe's bubble with PP = 2p stages on p devices"};
      break;
  }
  if (out.ideal > 0) {
    out.idle_fraction = out.bubble / (out.ideal + out.bubble);
    out.ratio = out.bubble / out.ideal;
  }
  return out;
}

}  // namespace dlsys::pipeline::theory
