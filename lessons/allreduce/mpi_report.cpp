#include "lessons/allreduce/mpi_report.h"

#include <fmt/format.h>

#include "engine/units.h"

namespace dlsys::allreduce {

std::string processes_bench_sentence(const AllreduceProcessesMeasured& m) {
  const std::string size = format_bytes_binary(m.bench_bytes);
  const std::string wrong = m.wrong == 0 ? "0" : "not 0";
  const std::string lab =
      m.backend == "cuda" ? "the lab's ring over CUDA IPC" : "the lab's ring over MPI point-to-point";
  if (m.lab_ring_fraction_of_mpi_busbw) {
    std::string out = fmt::format(
        "At {} {} reaches {:.1f} % of {}'s busbw in the same run ({:.3f} of {:.3f} GB/s); #wrong {} on every row", size,
        lab, 100 * *m.lab_ring_fraction_of_mpi_busbw, m.bench_peer, m.lab_ring_busbw_gbps, m.mpi_busbw_gbps, wrong);
    if (m.backend == "cuda") return out + ".";
    return out + fmt::format(": {} (expected at least {:.0f} %).", m.bench_met ? "met" : "NOT met",
                             100 * m.bench_expected_fraction);
  }
  if (m.lab_ring_busbw_gbps > 0)
    return fmt::format("At {} {} reaches {:.3f} GB/s busbw; #wrong {} on every row.", size, lab, m.lab_ring_busbw_gbps,
                       wrong);
  return fmt::format("At {} {} across processes reaches {:.3f} GB/s busbw; #wrong {} on every row.", size, m.bench_peer,
                     m.mpi_busbw_gbps, wrong);
}

std::string processes_report(const AllreduceProcessesMeasured& m) {
  std::string out = fmt::format("\n# {} ranks: {}\n# MPI library: {}\n", m.world_size, m.label, m.mpi_library);
  out += fmt::format("#{:>12} {:>12} {:>6} {:>6} {:>10} {:>8} {:>8} {:>7}  {}\n", "size", "count", "type", "redop",
                     "time", "algbw", "busbw", "#wrong", "collective / implementation");
  out += fmt::format("#{:>12} {:>12} {:>6} {:>6} {:>10} {:>8} {:>8} {:>7}\n", "(B)", "(elements)", "", "", "(us)",
                     "(GB/s)", "(GB/s)", "");
  for (const ProcessRow& row : m.rows)
    out += fmt::format(" {:>12.0f} {:>12.0f} {:>6} {:>6} {:>10.2f} {:>8.3f} {:>8.3f} {:>7}  {} / {}\n", row.bytes,
                       row.count, "float", row.collective == "all_gather" ? "none" : "sum", row.time_us, row.algbw_gbps,
                       row.busbw_gbps, row.wrong, row.collective, row.implementation);
  out +=
      "# busbw = algbw x 2(N-1)/N for all-reduce, x (N-1)/N for reduce-scatter and all-gather (nccl-tests); "
      "GB = 1e9 bytes\n# time: median sample; a sample starts after a barrier and counts the slowest rank\n";
  out += "# " + processes_bench_sentence(m) + "\n";
  if (m.record_steps > 0)
    out += fmt::format(
        "# step record: the ring between processes, run on the step-through's inputs, recorded {} rows (start and "
        "steps) and {} the threads' ring's record\n",
        m.record_steps, m.record_matches_threads ? "matches" : "does NOT match");
  for (const std::string& caveat : m.caveats) out += "# note: " + caveat + "\n";
  return out;
}

}  // namespace dlsys::allreduce
