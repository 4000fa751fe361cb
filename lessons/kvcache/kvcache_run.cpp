// The kvcache lesson's run: the live decoder timed with and without its cache, beside the curves of the closed forms.
#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "engine/address_space.h"
#include "engine/measure.h"
#include "kernels/decoder/decoder.h"
#include "lessons/kvcache/kvcache_lesson.h"
#include "lessons/kvcache/live_decode.h"

namespace dlsys {

using namespace kvcache;

namespace {

// A theory line with the shape of `flops(position)`, scaled so its total matches the measured series' total:
// it shows how the time should grow, not an absolute prediction.
Series flops_shaped_line(const Series& measured, const std::string& id, const std::string& name,
                         const std::function<double(std::int64_t)>& flops) {
  double measured_total = 0, flops_total = 0;
  for (const auto& pt : measured.points) {
    measured_total += pt.y;
    flops_total += flops(std::int64_t(pt.x));
  }
  Series line{id, name, "theory", measured.x_label, measured.x_unit, measured.y_label, measured.y_unit, {}};
  for (const auto& pt : measured.points) {
    const double y = flops(std::int64_t(pt.x)) * measured_total / flops_total;
    line.points.push_back({pt.x, y, y, y});
  }
  return line;
}

KvCacheMeasured measured_from(const LiveDecodeTimes& live, const decoder::Shape& shape, std::int64_t tokens,
                              const KvCacheTheory& theory, const MemoryLedger& ledger) {
  const double cached_us = live.last_cached.median_us, recompute_us = live.last_recompute.median_us;
  KvCacheMeasured m;
  m.kv_allocated_bytes = ledger.peak_bytes("kv");
  m.kv_matches_formula = m.kv_allocated_bytes == theory.live_kv_bytes;
  m.decode_us_cached = cached_us;
  m.decode_us_cached_min = live.last_cached.min_us;
  m.decode_us_cached_max = live.last_cached.max_us;
  m.decode_us_uncached = recompute_us;
  m.decode_us_uncached_min = live.last_recompute.min_us;
  m.decode_us_uncached_max = live.last_recompute.max_us;
  m.last_step_repeats = live.last_step_repeats;
  m.speedup = recompute_us / cached_us;
  m.speedup_bar = kMinCacheSpeedup;
  m.meets_bar = m.speedup >= kMinCacheSpeedup;
  m.last_position = tokens - 1;
  for (const TimingStats& t : live.cached_per_position) m.generate_us_cached += t.median_us;
  for (const TimingStats& t : live.recompute_per_position) m.generate_us_uncached += t.median_us;
  m.tokens_match = live.tokens_match;
  m.max_abs_logit_diff = live.max_abs_logit_diff;
  m.cached_gflops_last = decoder::flops_cached_step(shape, tokens - 1) / (cached_us * 1e3);
  m.uncached_gflops_last = decoder::flops_recompute_step(shape, tokens - 1) / (recompute_us * 1e3);
  return m;
}

// Time per position both ways, each beside a line with the shape of its FLOP count.
void add_live_series(RunResult& result, const LiveDecodeTimes& live, const decoder::Shape& shape) {
  Series cached{"cached_time", "with KV cache (measured)", "measured", "position",
                "tokens",      "time per token",           "us",       {}};
  Series recompute{
      "recompute_time", "recomputing K, V (measured)", "measured", "position", "tokens", "time per token", "us", {}};
  for (std::size_t i = 0; i < live.cached_per_position.size(); ++i) {
    const TimingStats &c = live.cached_per_position[i], &u = live.recompute_per_position[i];
    cached.points.push_back({double(i), c.median_us, c.min_us, c.max_us});
    recompute.points.push_back({double(i), u.median_us, u.min_us, u.max_us});
  }
  Series cached_shape = flops_shaped_line(cached, "cached_flops_theory", "with KV cache: FLOPs, scaled (theory)",
                                          [&](std::int64_t i) { return decoder::flops_cached_step(shape, i); });
  Series recompute_shape = flops_shaped_line(recompute, "recompute_flops_theory", "recomputing: FLOPs, scaled (theory)",
                                             [&](std::int64_t i) { return decoder::flops_recompute_step(shape, i); });
  result.series.push_back(std::move(cached));
  result.series.push_back(std::move(recompute));
  result.series.push_back(std::move(cached_shape));
  result.series.push_back(std::move(recompute_shape));
}

// The calculator's curve: cache bytes against sequence length at this batch (the window flattens it).
Series kv_bytes_curve(const KvCacheParams& p) {
  const SizingQuery q = sizing_query_of(p);
  Series curve{"kv_bytes_theory", fmt::format("KV cache, batch {} (theory)", q.batch),
               "theory",          "sequence length",
               "tokens",          "KV cache",
               "bytes",           {}};
  const std::int64_t curve_end = std::max(q.seq, q.model.max_positions);
  for (std::int64_t seq = 1; seq <= curve_end; seq = seq > curve_end / 2 && seq < curve_end ? curve_end : seq * 2) {
    SizingQuery at = q;
    at.seq = seq;
    const double bytes = double(size_inference(at).kv_bytes);
    curve.points.push_back({double(seq), bytes, bytes, bytes});
    if (seq == curve_end) break;
  }
  return curve;
}

}  // namespace

RunResult KvCacheLesson::run_with(const KvCacheParams& p, RunContext& ctx) const {
  RunResult result = begin_result(*this, ctx);
  const decoder::Shape& shape = p.live;
  const std::int64_t tokens = p.tokens;
  const int repeats = p.repeats, threads = p.threads;

  result.backend.kind = "cpu";
  result.backend.device = describe_cpu().name;
  result.backend.timer = "steady_clock";
  result.backend.repeats = repeats;
  if (ctx.backend == BackendKind::Cuda)
    result.backend.notes.push_back("the live decoder runs on the CPU; the sizes above are for the chosen GPU memory");
  const int hardware_threads = describe_cpu().threads;
  if (threads > hardware_threads)
    result.backend.notes.push_back(fmt::format("{} threads time-share {} hardware threads", threads, hardware_threads));
  result.backend.notes.push_back(
      fmt::format("live decoder: batch 1; series: each position timed once per repeat after an untimed warm-up; last "
                  "token: median of {} timed "
                  "repeats of that step",
                  last_step_repeats(repeats)));
  set_openblas_threads(threads);

  RunPlan plan(ctx.control, live_decode_weight(tokens, repeats));
  const LiveDecodeTimes live = run_live_decode(shape, tokens, repeats, ctx.ledger, plan);
  result.measured = make_values(measured_from(live, shape, tokens, *result.theory_as<KvCacheTheory>(), ctx.ledger));
  add_live_series(result, live, shape);
  result.series.push_back(kv_bytes_curve(p));
  plan.finish();
  finish_result(result, ctx.ledger);
  return result;
}

}  // namespace dlsys
