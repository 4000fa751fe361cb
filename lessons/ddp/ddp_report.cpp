// What `dlsys-lab run ddp` prints after the generic table: the chosen run's step split, every variant against
// single-rank training, step time against bucket size, both ways against N, and the benchmark.
#include <fmt/format.h>

#include "engine/units.h"
#include "lessons/ddp/ddp_lesson.h"

namespace dlsys {

namespace {

std::string us(double v) { return fmt::format("{:.0f} us", v); }

std::string sweep_table(const RunResult& r) {
  const Series *step = r.find_series("step_vs_bucket"), *exposed = r.find_series("exposed_vs_bucket"),
               *overlap = r.find_series("overlap_vs_bucket");
  if (!step || !exposed || !overlap) return {};
  std::string out = "\nStep time against bucket size (DDP, fp32, median of the timed steps)\n";
  out += fmt::format("  {:>22} {:>12} {:>16} {:>10}\n", "bucket", "step", "exposed comm", "overlap");
  for (std::size_t i = 0; i < step->points.size(); ++i)
    out += fmt::format("  {:>22} {:>12} {:>16} {:>10.2f}\n", format_bytes_both(step->points[i].x),
                       us(step->points[i].y), us(exposed->points[i].y), overlap->points[i].y);
  return out;
}

std::string ranks_table(const RunResult& r) {
  const Series *ddp = r.find_series("step_vs_n_ddp"), *dp = r.find_series("step_vs_n_dp"),
               *wait_ddp = r.find_series("rank0_wait_vs_n_ddp"), *wait_dp = r.find_series("rank0_wait_vs_n_dp"),
               *bytes_ddp = r.find_series("rank0_bytes_vs_n_ddp"), *bytes_dp = r.find_series("rank0_bytes_vs_n_dp");
  if (!ddp || !dp || !wait_ddp || !wait_dp || !bytes_ddp || !bytes_dp) return {};
  std::string out = "\nAgainst N (rank 0 per optimizer step; bytes sent + received, counted)\n";
  out += fmt::format("  {:>3} {:>12} {:>12} {:>14} {:>14} {:>20} {:>20}\n", "N", "DDP step", "DP step",
                     "DDP rank0 wait", "DP rank0 wait", "DDP rank0 bytes", "DP rank0 bytes");
  for (std::size_t i = 0; i < ddp->points.size() && i < dp->points.size(); ++i)
    out += fmt::format("  {:>3.0f} {:>12} {:>12} {:>14} {:>14} {:>20} {:>20}\n", ddp->points[i].x, us(ddp->points[i].y),
                       us(dp->points[i].y), us(wait_ddp->points[i].y), us(wait_dp->points[i].y),
                       format_bytes_both(bytes_ddp->points[i].y), format_bytes_both(bytes_dp->points[i].y));
  return out;
}

}  // namespace

std::string DdpLesson::text_report(const RunResult& r) const {
  const auto* t = r.theory_as<ddp::DdpTheory>();
  const auto* m = r.measured_as<ddp::DdpMeasured>();
  if (!t || !m) return {};
  const bool processes = m->launcher == "mpi";
  std::string out = fmt::format(
      "\nThe chosen run ({}), per optimizer step, the slowest rank, median of {} steps\n"
      "  step {} = compute {} + exposed communication {} + idle {}\n"
      "  time in all-reduces {}, of which hidden behind backward {}: overlap_fraction {:.2f}\n"
      "  rank 0 sent {} per step; theory {} ({} buckets; ring closed form 2 (N-1)/N x {} = {}): {}\n",
      processes ? m->placement : "ranks as threads on this CPU", m->timed_steps, us(m->step_us), us(m->compute_us),
      us(m->exposed_comm_us), us(m->idle_us), us(m->comm_us), us(m->hidden_comm_us), m->overlap_fraction,
      format_bytes_both(double(m->comm_bytes)), format_bytes_both(double(t->bytes_per_rank_per_step)), t->buckets,
      format_bytes_both(double(t->wire_gradient_bytes)), format_bytes_both(t->ring_closed_form_bytes),
      m->comm_bytes_match_theory ? "equal" : "DIFFERENT");
  out += fmt::format(
      "  weights after the last step against one rank on the full batch: max rel err {:.3g}{}; "
      "replicas identical: {}\n",
      m->max_rel_err_vs_single, m->bit_identical_vs_single ? " (bit-identical)" : "",
      m->replicas_identical ? "yes" : "NO");
  out += "\nEvery variant against one rank on the full batch\n";
  out += fmt::format("  {:>13} {:>5} {:>3} {:>3} {:>22} {:>12} {:>22} {:>12}\n", "mode", "dtype", "k", "N", "bucket",
                     "step", "rank 0 sent", "max rel err");
  for (const ddp::Variant& v : m->variants)
    out += fmt::format("  {:>13} {:>5} {:>3} {:>3} {:>22} {:>12} {:>22} {:>12.3g}{}\n", v.mode, v.grad_dtype,
                       v.accumulate, v.ranks, v.bucket_bytes ? format_bytes_both(double(v.bucket_bytes)) : "-",
                       us(v.step_us), format_bytes_both(double(v.comm_bytes)), v.max_rel_err_vs_single,
                       v.bit_identical_vs_single ? " (bit-identical)" : "");
  out += sweep_table(r);
  out += ranks_table(r);
  if (processes)
    out += fmt::format(
        "\nBenchmark: not run with launcher=mpi (it trains N = {} rank threads beside the sweeps; run with "
        "launcher=threads for it)\n",
        kBenchRanks);
  else
    out += fmt::format(
        "\nBenchmark: N = {}, buckets of a quarter of the gradient ({}), fp32: overlap_fraction {:.2f}, expected >= "
        "{:.1f}: {}\n",
        kBenchRanks, format_bytes_both(double(m->bench_bucket_bytes)), m->bench_overlap_fraction,
        m->bench_overlap_expected, m->bench_met ? "met" : "NOT met");
  if (r.backend.conditions.disturbed())
    out += "  " + r.backend.conditions.sentence() +
           " Other processes take turns with the rank and communication threads, so overlap numbers move with them.\n";
  return out;
}

}  // namespace dlsys
