// What `dlsys-lab run roofline` prints after the generic table: the roof this run measured, every point against it,
// and whether the two things the lesson expects held.
#include <fmt/format.h>

#include "lessons/roofline/roofline_lesson.h"

namespace dlsys {

std::string RooflineLesson::text_report(const RunResult& r) const {
  const auto* m = r.measured_as<roofline::RooflineMeasured>();
  const auto* t = r.theory_as<roofline::RooflineTheory>();
  if (m == nullptr || t == nullptr) return {};
  std::string out = fmt::format("\nThe roof measured here ({} threads, {} timed calls each, fastest call):\n",
                                r.params.at("threads"), r.params.at("repeats"));
  for (const roofline::StreamMeasure& s : m->stream_kernels)
    out += fmt::format("  STREAM {:<6} {:8.2f} GB/s  (median call {:.2f})\n", s.kernel, s.gbps, s.gbps_median);
  out += fmt::format("  compute     {:8.1f} GFLOP/s  independent FMA chains on every thread\n", m->peak_gflops);
  if (t->datasheet_peak_gflops)
    out += fmt::format("  datasheet   {:8.1f} GFLOP/s  {}\n", *t->datasheet_peak_gflops, t->datasheet_source);
  out += fmt::format("  ridge       {:8.2f} FLOP/B = {:.1f} GFLOP/s / {:.2f} GB/s ({})\n",
                     t->ridge_flop_per_byte.value_or(0), m->peak_gflops, m->bandwidth_gbps, m->bandwidth_kernel);
  // GB/s of each point (its bytes over its median call) and their share of the bandwidth ceiling measured above.
  out += fmt::format("\n{:<44} {:>10} {:>10} {:>10} {:>8} {:>10} {:>9} {:>10}\n", "point (median call)", "FLOP/B",
                     "GFLOP/s", "roof", "of roof", "GB/s", "of STREAM", "error");
  auto row = [&](const roofline::RoofPoint& p) {
    const double gbps = p.gflops / p.intensity;
    out += fmt::format("{:<44} {:>10.3g} {:>10.2f} {:>10.2f} {:>7.0f}% {:>10.1f} {:>8.0f}% {:>10.2g}\n", p.name,
                       p.intensity, p.gflops, p.roof_gflops, p.percent_of_roof, gbps, 100 * gbps / m->bandwidth_gbps,
                       p.max_rel_err);
  };
  for (const auto& p : m->sweep_points) row(p);
  for (const auto& p : m->roof_points) row(p);
  out += fmt::format("\noverhead floor: {:.3g} us for {}, {:.3g} us for {}\n", m->overhead_call_floor_us,
                     m->overhead_call_what, m->overhead_pool_floor_us, m->overhead_pool_what);
  if (m->launch_and_wait_us)
    out += fmt::format("an empty kernel launched and waited for: {:.3g} us per round trip\n", *m->launch_and_wait_us);
  out += "\nwhat the lesson expects:\n";
  out += fmt::format("  no point above the roof by more than {:.0f}%: furthest {:+.1f}% ({}): {}\n",
                     kRoofTolerancePercent, m->worst_percent_above_roof, m->worst_point,
                     m->roof_bar_met ? "met" : "NOT met: a count of bytes or FLOP is too low, or a ceiling too low");
  if (m->sweep_crosses_ridge)
    out += fmt::format(
        "  the sweep bends within a factor {:.0f} of peak / bandwidth: it bends at {:.2f} FLOP/B ({:.1f} GFLOP/s over "
        "{:.2f} GB/s), {:.2f}x the ridge {:.2f}: {}\n",
        kRidgeFactor, m->sweep_ridge_flop_per_byte, m->sweep_plateau_gflops, m->sweep_bandwidth_gbps, m->ridge_ratio,
        t->ridge_flop_per_byte.value_or(0), m->ridge_bar_met ? "met" : "NOT met");
  else
    out += fmt::format(
        "  the sweep bends near peak / bandwidth: not measured, its points do not reach both sides of the ridge "
        "({:.2f} FLOP/B); widen k\n",
        t->ridge_flop_per_byte.value_or(0));
  out += fmt::format("  every output matches its double-precision reference: {} (largest error {:.2g})\n",
                     m->wrong ? "NO" : "yes", m->max_rel_err);
  if (r.backend.conditions.disturbed())
    out += "  (other programs were busy meanwhile: see the line above the tables)\n";
  return out;
}

}  // namespace dlsys
