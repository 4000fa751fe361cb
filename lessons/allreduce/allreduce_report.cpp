// The nccl-tests style table `dlsys-lab run allreduce` prints after the generic report: one row per swept size.
#include <fmt/format.h>

#include "engine/units.h"
#include "lessons/allreduce/allreduce_lesson.h"
#include "lessons/allreduce/mpi_report.h"
#include "lessons/run_file.h"

namespace dlsys {

std::string AllreduceLesson::text_report(const RunResult& r) const {
  if (const auto* processes = r.measured_as<allreduce::AllreduceProcessesMeasured>())
    return allreduce::processes_report(*processes);
  const auto* t = r.theory_as<allreduce::AllreduceTheory>();
  const auto* m = r.measured_as<allreduce::AllreduceMeasured>();
  if (t == nullptr || m == nullptr) return {};
  const allreduce::AllreduceParams p = read_params(recorded_params(*this, r));
  const std::string op = collectives::op_name(p.op);
  std::string out =
      fmt::format("\n# {} with algo {} over {} ranks ({}{}), float32, out of place\n", op, allreduce::algo_name(p.algo),
                  p.n_text, r.backend.kind, r.backend.emulated ? ", emulated" : "");
  out += fmt::format("#{:>12} {:>12} {:>6} {:>6} {:>10} {:>8} {:>8} {:>7} {:>9}\n", "size", "count", "type", "redop",
                     "time", "algbw", "busbw", "#wrong", "ceiling");
  out += fmt::format("#{:>12} {:>12} {:>6} {:>6} {:>10} {:>8} {:>8} {:>7} {:>9}\n", "(B)", "(elements)", "", "", "(us)",
                     "(GB/s)", "(GB/s)", "", "(GB/s)");
  double busbw_sum = 0;
  for (const allreduce::SweepRow& row : m->sweep) {
    busbw_sum += row.busbw_gbps;
    out += fmt::format(" {:>12.0f} {:>12.0f} {:>6} {:>6} {:>10.2f} {:>8.3f} {:>8.3f} {:>7} {:>9.3f}{}\n", row.bytes,
                       row.count, "float", op == "all_gather" ? "none" : "sum", row.time_us, row.algbw_gbps,
                       row.busbw_gbps, row.wrong, row.ceiling_gbps, row.above_ceiling ? " *" : "");
  }
  if (!m->sweep.empty())
    out += fmt::format("# Avg bus bandwidth    : {:.3f} GB/s\n", busbw_sum / double(m->sweep.size()));
  out += fmt::format("# busbw = algbw x {} = algbw x {:.4g} (nccl-tests); algbw = size / time; GB = 1e9 bytes\n",
                     op == "allreduce" ? "2(N-1)/N" : "(N-1)/N", t->busbw_factor);
  out += m->hardware_threads == 0
             ? "# ceiling: the copy ceiling of one probe at S in this run, for every size; * busbw above it\n"
             : "# ceiling: the copy ceiling measured at each size in this run; * busbw above it (see the notes)\n";
  if (m->fit)
    out += fmt::format(
        "# alpha-beta fit over the sweep: alpha = {:.2f} us per step, beta = {:.3f} GB/s; at {}: latency term "
        "{}, bandwidth term {}\n",
        m->fit->alpha_us, m->fit->beta_gbps, format_bytes_binary(t->count * 4),
        format_duration_us(m->fit->alpha_term_us), format_duration_us(m->fit->beta_term_us));
  else
    out += "# alpha-beta fit: none (no byte crosses a link, or the times do not grow with the bytes)\n";
  out += fmt::format(
      "# at {} ({}): busbw {:.3f} GB/s = {:.1f}% of the copy ceiling {:.3f} GB/s measured in this run; "
      "#wrong {}\n",
      format_bytes_binary(t->count * 4), p.bytes_text, m->busbw_gbps, 100 * m->busbw_fraction_of_ceiling,
      m->ceiling_gbps, m->wrong);
  for (const std::string& caveat : m->caveats) out += "# note: " + caveat + "\n";
  if (m->comparison) {
    out += "\n# all-reduce algorithms at the sweep's sizes (same ranks and links; closed forms at the largest size)\n";
    out += fmt::format("#{:>19} {:>6} {:>5} {:>14} {:>14} {:>9} {:>10} {:>7}\n", "algorithm", "steps", "msgs",
                       "bytes sent", "bytes counted", "alpha", "beta", "#wrong");
    for (const allreduce::AlgorithmRun& a : m->comparison->algorithms)
      out += fmt::format(" {:>19} {:>6} {:>5} {:>14.0f} {:>14.0f} {:>9} {:>10} {:>7}\n", a.algo, a.steps,
                         a.messages_sent, a.bytes_sent_per_rank, a.bytes_sent_counted,
                         a.alpha_us ? fmt::format("{:.2f} us", *a.alpha_us) : "no fit",
                         a.beta_gbps ? fmt::format("{:.3f} GB/s", *a.beta_gbps) : "no fit", a.wrong);
    out += "# " + m->comparison->crossover_sentence + "\n";
  } else if (!m->comparison_skipped.empty()) {
    out += "# " + m->comparison_skipped + "\n";
  }
  return out;
}

}  // namespace dlsys
