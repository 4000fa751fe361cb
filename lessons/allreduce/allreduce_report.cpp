// The nccl-tests style table `dlsys-lab run allreduce` prints after the generic report: one row per swept size.
#include <fmt/format.h>

#include "engine/units.h"
#include "lessons/allreduce/allreduce_lesson.h"

namespace dlsys {

namespace {

std::string param(const RunResult& r, const char* key) {
  const auto it = r.params.find(key);
  return it == r.params.end() ? "" : it->second;
}

}  // namespace

std::string AllreduceLesson::text_report(const RunResult& r) const {
  const Series* time = r.find_series("time_measured");
  const Series* wrong = r.find_series("wrong_elements");
  const auto* t = r.theory_as<allreduce::AllreduceTheory>();
  const auto* m = r.measured_as<allreduce::AllreduceMeasured>();
  if (time == nullptr || t == nullptr || m == nullptr) return {};
  const double factor = t->busbw_factor;
  const std::string op = param(r, "op");
  std::string out =
      fmt::format("\n# {} with algo {} over {} ranks ({}{}), float32, out of place\n", op, param(r, "algo"),
                  param(r, "n"), r.backend.kind, r.backend.emulated ? ", emulated" : "");
  out += fmt::format("#{:>12} {:>12} {:>6} {:>6} {:>10} {:>8} {:>8} {:>7}\n", "size", "count", "type", "redop", "time",
                     "algbw", "busbw", "#wrong");
  out += fmt::format("#{:>12} {:>12} {:>6} {:>6} {:>10} {:>8} {:>8} {:>7}\n", "(B)", "(elements)", "", "", "(us)",
                     "(GB/s)", "(GB/s)", "");
  double busbw_sum = 0;
  for (std::size_t i = 0; i < time->points.size(); ++i) {
    const SeriesPoint& p = time->points[i];
    const double algbw = p.y > 0 ? p.x / (p.y * 1e3) : 0;
    busbw_sum += algbw * factor;
    const double wrong_count = wrong && i < wrong->points.size() ? wrong->points[i].y : -1;
    out += fmt::format(" {:>12.0f} {:>12.0f} {:>6} {:>6} {:>10.2f} {:>8.3f} {:>8.3f} {:>7.0f}\n", p.x, p.x / 4, "float",
                       op == "all_gather" ? "none" : "sum", p.y, algbw, algbw * factor, wrong_count);
  }
  if (!time->points.empty())
    out += fmt::format("# Avg bus bandwidth    : {:.3f} GB/s\n", busbw_sum / double(time->points.size()));
  out += fmt::format("# busbw = algbw x {} = algbw x {:.4g} (nccl-tests); algbw = size / time; GB = 1e9 bytes\n",
                     op == "allreduce" ? "2(N-1)/N" : "(N-1)/N", factor);
  if (m->fit)
    out += fmt::format("# alpha-beta fit over the sweep: alpha = {:.2f} us per step, beta = {:.3f} GB/s\n",
                       m->fit->alpha_us, m->fit->beta_gbps);
  else
    out += "# alpha-beta fit: none (no byte crosses a link)\n";
  out += fmt::format(
      "# at {} ({}): busbw {:.3f} GB/s = {:.1f}% of the copy ceiling {:.3f} GB/s measured in this run; "
      "#wrong {}\n",
      format_bytes_binary(t->count * 4), param(r, "bytes"), m->busbw_gbps, 100 * m->busbw_fraction_of_ceiling,
      m->ceiling_gbps, m->wrong);
  return out;
}

}  // namespace dlsys
