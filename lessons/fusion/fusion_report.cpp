// What `dlsys-lab run fusion` prints after the generic table: each pair of kernels with its byte ratio and measured
// speedup, and whether the speedup the lesson expects held.
#include <fmt/format.h>

#include "engine/units.h"
#include "kernels/fusion/fusion_math.h"
#include "lessons/fusion/fusion_lesson.h"

namespace dlsys {

std::string FusionLesson::text_report(const RunResult& r) const {
  const auto* t = r.theory_as<fusion::FusionTheory>();
  const auto* m = r.measured_as<fusion::FusionMeasured>();
  if (t == nullptr || m == nullptr) return {};
  auto ms = [](const fusion::Timing& x) { return format_duration_us(x.us); };
  // A pass's bandwidth from the bytes it must move per element, and its share of STREAM copy measured in this run.
  const double elements = double(t->rows) * double(t->cols);
  auto rate = [&](const fusion::Timing& x, double bytes_per_element) {
    const double gbps = bytes_per_element * elements / (x.us * 1e3);
    return fmt::format("{:7.1f} GB/s {:3.0f}%", gbps, 100 * gbps / m->stream_copy_gbps);
  };
  std::string out =
      fmt::format("\ny = ReLU(x + b) on {} x {} fp32 (median calls; GB/s and % of STREAM copy, {:.1f} GB/s):\n",
                  t->rows, t->cols, m->stream_copy_gbps);
  using fusion::Bias;
  out += fmt::format(
      "  broadcast bias  unfused {:>9} ({})  fused {:>9} ({})  speedup {:.2f}  byte ratio 16 B / 8 B = {:.2f}\n",
      ms(m->unfused_broadcast), rate(m->unfused_broadcast, fusion::bytes_per_element_unfused(Bias::Broadcast)),
      ms(m->fused_broadcast), rate(m->fused_broadcast, fusion::bytes_per_element_fused(Bias::Broadcast)),
      m->speedup_broadcast, t->byte_ratio_broadcast);
  out += fmt::format(
      "  full bias       unfused {:>9} ({})  fused {:>9} ({})  speedup {:.2f}  byte ratio 20 B / 12 B = {:.2f}\n",
      ms(m->unfused_full), rate(m->unfused_full, fusion::bytes_per_element_unfused(Bias::Full)), ms(m->fused_full),
      rate(m->fused_full, fusion::bytes_per_element_fused(Bias::Full)), m->speedup_full, t->byte_ratio_full);
  out += fmt::format("  fused kernel moves {:.2f} GB/s = {:.0f}% of STREAM copy ({:.2f} GB/s) on the same arrays\n",
                     m->effective_gbps, 100 * m->effective_fraction_of_stream, m->stream_copy_gbps);
  const double access = fusion::kElementBytes;
  out += fmt::format(
      "x.cos().cos(): unfused {} ({}) fused {} ({}) ({:.2f}x; 4 against 2 accesses); one cos {} ({}) (fused "
      "cos.cos = {:.2f} cos)\n",
      ms(m->cos_cos_unfused), rate(m->cos_cos_unfused, access * fusion::kCosCosAccessesUnfused), ms(m->cos_cos_fused),
      rate(m->cos_cos_fused, access * fusion::kCosCosAccessesFused), m->cos_cos_speedup, ms(m->cos),
      rate(m->cos, 2 * access), m->cos_cos_over_cos);
  out += fmt::format("GELU {} ({}) against ReLU {} ({}): {:.2f}x\n", ms(m->gelu), rate(m->gelu, 2 * access),
                     ms(m->relu), rate(m->relu, 2 * access), m->gelu_over_relu);
  out += "chains of L multiply-adds:\n";
  for (const fusion::ChainMeasure& c : m->chains)
    out += fmt::format("  L = {:>2}  unfused {:>9} ({})  fused {:>9} ({})  ({:.2f}x; bytes {}:1)\n", c.length,
                       ms(c.unfused), rate(c.unfused, fusion::chain_bytes_per_element_unfused(c.length)), ms(c.fused),
                       rate(c.fused, fusion::kChainBytesPerElementFused), c.unfused.us / c.fused.us, c.length);
  out += fmt::format("in cache ({} per array): unfused {} fused {} ({:.2f}x); {} costs {}\n",
                     format_bytes_binary(t->small_bytes), ms(m->small_unfused), ms(m->small_fused), m->small_speedup,
                     m->dispatch_what, ms(m->dispatch));
  out += "\nwhat the lesson expects:\n";
  out +=
      fmt::format("  the speedup within {:.0f}% of the byte ratio ({} bias): {:.2f} against {:.2f}: {}\n",
                  100 * kSpeedupTolerance, t->bias, m->speedup, t->byte_ratio, m->speedup_bar_met ? "met" : "NOT met");
  if (t->bias != "broadcast")  // a run on arrays that fit in the last-level cache says so in its notes
    out += "  (the expectation is for a broadcast bias, on arrays larger than the last-level cache)\n";
  out += fmt::format("  every output matches its double-precision reference: {} (largest error {:.2g})\n",
                     m->wrong ? "NO" : "yes", m->max_abs_err);
  if (r.backend.conditions.disturbed())
    out += "  (other programs were busy meanwhile: see the line above the tables)\n";
  return out;
}

}  // namespace dlsys
