#include "lessons/fusion/fusion_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "engine/host_buffer.h"
#include "engine/measure.h"
#include "engine/units.h"
#include "kernels/common/seeded_fill.h"
#include "kernels/fusion/fusion.h"
#include "kernels/roofline/roofline.h"
#include "lessons/fusion/fusion_lesson.h"
#include "lessons/roofline/last_level_cache.h"
#include "lessons/roofline/roofline_measure_common.h"

namespace dlsys::fusion {

namespace {

// Largest error a kernel may show and still be right: the vector cos, exp and tanh polynomials are good to about
// 1e-7, and a chain of eight multiply-adds adds a few roundings more.
constexpr double kErrorTolerance = 1e-5;
constexpr std::int64_t kErrorSamples = 4096;
constexpr double kSmallBatchUs = 200;  // small calls are timed in batches at least this long

Timing timing_of(const TimingStats& t) { return {t.median_us, t.min_us, t.max_us}; }

struct Arrays {
  HostBuffer<float> x, t, y, bias_full, bias_broadcast;
};

struct FusionRun {
  RunContext& ctx;
  std::int64_t rows = 0, cols = 0, n = 0;
  int threads = 1, repeats = 1;
  Stores stores = Stores::Cached;
  double done = 0, total = 1;
  FusionMeasured m;

  void progress(const std::string& what) { ctx.control.progress(std::min(done++ / total, 0.99), what); }
  TimingStats time(const std::function<void()>& work, int least_repeats = 1) const {
    return measure(work, MeasureOptions{.warmup = 1, .repeats = std::max(repeats, least_repeats), .max_total_us = 2e6},
                   [&] { ctx.control.check_cancelled(); });
  }
  // Two ways of computing the same thing, timed in alternation (one warm-up of each, then a call of one, a call of
  // the other, ...): a burst of other work slows both alike instead of only whichever ran during it.
  std::pair<Timing, Timing> time_pair(const std::function<void()>& first, const std::function<void()>& second) const {
    first();
    second();
    std::vector<double> a, b;
    double total_us = 0;
    for (int i = 0; i < repeats && (i == 0 || total_us < 4e6); ++i) {
      ctx.control.check_cancelled();
      Stopwatch w;
      first();
      a.push_back(w.elapsed_us());
      w.restart();
      second();
      b.push_back(w.elapsed_us());
      total_us += a.back() + b.back();
    }
    return {timing_of(summarize_us(a, "steady_clock")), timing_of(summarize_us(b, "steady_clock"))};
  }
  // Largest |out - expected(i)| over evenly spread samples; every value here is of order one.
  void check(const float* out, std::int64_t count, const std::function<double(std::int64_t)>& expected) {
    const std::int64_t step = std::max<std::int64_t>(1, count / kErrorSamples);
    for (std::int64_t i = 0; i < count; i += step)
      m.max_abs_err = std::max(m.max_abs_err, std::fabs(double(out[i]) - expected(i)));
  }
};

const float* bias_of(const Arrays& a, Bias bias) {
  return bias == Bias::Full ? a.bias_full.data() : a.bias_broadcast.data();
}
double bias_at(const Arrays& a, Bias bias, std::int64_t i, std::int64_t cols) {
  return bias == Bias::Full ? a.bias_full[std::size_t(i)] : a.bias_broadcast[std::size_t(i % cols)];
}

// y = ReLU(x + b) both ways with one bias; returns (unfused, fused) and checks both outputs.
std::pair<Timing, Timing> measure_add_relu(FusionRun& r, Arrays& a, Bias bias) {
  const char* name = bias == Bias::Full ? "full" : "broadcast";
  const float* b = bias_of(a, bias);
  auto expected = [&](std::int64_t i) {
    return add_bias_relu_reference(a.x[std::size_t(i)], float(bias_at(a, bias, i, r.cols)));
  };
  r.progress(fmt::format("ReLU(x + b) unfused and fused, {} bias", name));
  const auto times = r.time_pair(
      [&] {
        add_bias(a.t.data(), a.x.data(), b, r.rows, r.cols, bias, r.threads, r.stores);
        relu_pass(a.y.data(), a.t.data(), r.n, r.threads, r.stores);
      },
      [&] { add_bias_relu(a.y.data(), a.x.data(), b, r.rows, r.cols, bias, r.threads, r.stores); });
  r.check(a.y.data(), r.n, expected);  // the fused output (last written)
  add_bias(a.t.data(), a.x.data(), b, r.rows, r.cols, bias, r.threads, r.stores);
  relu_pass(a.y.data(), a.t.data(), r.n, r.threads, r.stores);
  r.check(a.y.data(), r.n, expected);  // and the unfused one
  return times;
}

void measure_cos_and_gelu(FusionRun& r, Arrays& a) {
  float *x = a.x.data(), *t = a.t.data(), *y = a.y.data();
  const auto n = r.n;
  r.progress("one cos");
  r.m.cos = timing_of(r.time([&] { cos_pass(y, x, n, r.threads, r.stores); }));
  r.check(y, n, [&](std::int64_t i) { return std::cos(double(x[i])); });
  r.progress("x.cos().cos() unfused and fused");
  std::tie(r.m.cos_cos_unfused, r.m.cos_cos_fused) = r.time_pair(
      [&] {
        cos_pass(t, x, n, r.threads, r.stores);
        cos_pass(y, t, n, r.threads, r.stores);
      },
      [&] { cos_cos(y, x, n, r.threads, r.stores); });
  r.check(y, n, [&](std::int64_t i) { return cos_cos_reference(x[i]); });
  r.check(t, n, [&](std::int64_t i) { return std::cos(double(x[i])); });
  r.progress("ReLU and GELU");
  std::tie(r.m.relu, r.m.gelu) =
      r.time_pair([&] { relu_pass(t, x, n, r.threads, r.stores); }, [&] { gelu_pass(y, x, n, r.threads, r.stores); });
  r.check(t, n, [&](std::int64_t i) { return std::max(0.0, double(x[i])); });
  r.check(y, n, [&](std::int64_t i) { return gelu_reference(x[i]); });
  r.m.cos_cos_speedup = r.m.cos_cos_unfused.us / r.m.cos_cos_fused.us;
  r.m.cos_cos_over_cos = r.m.cos_cos_fused.us / r.m.cos.us;
  r.m.gelu_over_relu = r.m.gelu.us / r.m.relu.us;
}

// Chains of L multiply-adds: L passes through memory (ping-pong between t and y) against one.
void measure_chains(FusionRun& r, Arrays& a, RunResult& result) {
  Series unfused{"chain_unfused", "unfused: L passes", "measured", "L (operations)", "", "time", "ms", {}};
  Series fused{"chain_fused", "fused: one pass", "measured", "L (operations)", "", "time", "ms", {}};
  Series unfused_line{"chain_unfused_theory",
                      "8 L B per element / measured bandwidth",
                      "theory",
                      "L (operations)",
                      "",
                      "time",
                      "ms",
                      {}};
  Series fused_line{
      "chain_fused_theory", "8 B per element / measured bandwidth", "theory", "L (operations)", "", "time", "ms", {}};
  for (double length : r.ctx.params.list("chain")) {
    const int L = static_cast<int>(length);
    r.progress(fmt::format("chain of {} operations", L));
    const float* last = nullptr;  // where the unfused chain left its result: t for odd L, y for even
    auto run_unfused = [&] {
      const float* in = a.x.data();
      for (int l = 0; l < L; ++l) {
        float* out = l % 2 == 0 ? a.t.data() : a.y.data();
        chain_op(out, in, r.n, l, r.threads, r.stores);
        in = out;
      }
      last = in;
    };
    auto run_fused = [&] { chain_fused(a.y.data(), a.x.data(), r.n, L, r.threads, r.stores); };
    const auto [tu, tf] = r.time_pair(run_unfused, run_fused);
    auto expected = [&](std::int64_t i) { return chain_reference(a.x[std::size_t(i)], L); };
    r.check(a.y.data(), r.n, expected);
    run_unfused();  // once more, untimed: the fused calls may have overwritten its result
    r.check(last, r.n, expected);
    r.m.chains.push_back({L, tu, tf});
    unfused.points.push_back({length, tu.us / 1e3, tu.min_us / 1e3, tu.max_us / 1e3});
    fused.points.push_back({length, tf.us / 1e3, tf.min_us / 1e3, tf.max_us / 1e3});
    const double bytes_ms = double(r.n) / (r.m.stream_copy_gbps * 1e6);  // ms per byte-per-element
    const double u = chain_bytes_per_element_unfused(L) * bytes_ms, f = kChainBytesPerElementFused * bytes_ms;
    unfused_line.points.push_back({length, u, u, u});
    fused_line.points.push_back({length, f, f, f});
  }
  for (Series* s : {&unfused, &fused, &unfused_line, &fused_line}) result.series.push_back(std::move(*s));
}

// ReLU(x + b) on arrays that fit in cache, time per call, and one call that hands a single element to the pool.
void measure_small(FusionRun& r, Arrays& a, Bias bias) {
  const std::int64_t count = r.ctx.params.integer("small") / 4;
  const std::int64_t cols = std::min(r.cols, count), rows = std::max<std::int64_t>(1, count / cols);
  const std::int64_t n = rows * cols;
  HostBuffer<float> x(r.ctx.ledger, "small", std::size_t(n)), t(r.ctx.ledger, "small", std::size_t(n)),
      y(r.ctx.ledger, "small", std::size_t(n));
  fill_seeded_uniform(x.span(), 7);
  const float* b = bias_of(a, bias);
  auto per_call = [&](const std::function<void()>& call) {
    int calls = 1;
    for (Stopwatch w; calls < (1 << 20); calls *= 4, w.restart()) {
      for (int i = 0; i < calls; ++i) call();
      if (w.elapsed_us() >= kSmallBatchUs) break;
    }
    const TimingStats s = r.time(
        [&] {
          for (int i = 0; i < calls; ++i) call();
        },
        5);
    return Timing{s.median_us / calls, s.min_us / calls, s.max_us / calls};
  };
  r.progress(fmt::format("ReLU(x + b) on {} x {} (in cache)", rows, cols));
  r.m.small_unfused = per_call([&] {
    add_bias(t.data(), x.data(), b, rows, cols, bias, r.threads, Stores::Cached);
    relu_pass(y.data(), t.data(), n, r.threads, Stores::Cached);
  });
  r.check(y.data(), n,
          [&](std::int64_t i) { return add_bias_relu_reference(x[std::size_t(i)], float(bias_at(a, bias, i, cols))); });
  r.m.small_fused =
      per_call([&] { add_bias_relu(y.data(), x.data(), b, rows, cols, bias, r.threads, Stores::Cached); });
  r.check(y.data(), n,
          [&](std::int64_t i) { return add_bias_relu_reference(x[std::size_t(i)], float(bias_at(a, bias, i, cols))); });
  r.m.dispatch = per_call([&] { roofline::scale_on_pool(y.data(), x.data(), 1, r.threads); });
  r.m.small_speedup = r.m.small_unfused.us / r.m.small_fused.us;
}

void add_notes(RunResult& result, const FusionRun& r) {
  const double llc = last_level_cache_bytes(), array = 4.0 * double(r.n);
  if (llc > 0 && 3 * array <= 2 * llc)
    result.backend.notes.push_back(fmt::format(
        "x, t and y ({} each) fit in the last-level cache ({}): fusion may save less, or more, than the byte ratio",
        format_bytes_binary(array), format_bytes_binary(llc)));
  if (r.m.wrong) result.backend.notes.push_back("an output differs from its reference by more than rounding explains");
}

}  // namespace

double run_bytes(const ParamValues& p) {
  const double n = double(p.integer("rows")) * double(p.integer("cols"));
  return 4.0 * (4 * n + double(p.integer("cols"))) + 3.0 * double(p.integer("small"));
}

double run_seconds_estimate(const ParamValues& p) {
  const double n = double(p.integer("rows")) * double(p.integer("cols"));
  double bytes_per_element = 16 + 8 + 20 + 12 + 8 + 16 + 8 + 8 + 8 + 8;  // ReLU(x + b) both ways, cos, relu, gelu, copy
  for (double length : p.list("chain")) bytes_per_element += 8 * length + 8;
  return bytes_per_element * n * (1.0 + double(p.integer("repeats"))) / 1e9;
}

void run_fusion(RunContext& ctx, RunResult& result) {
  const ParamValues& p = ctx.params;
  FusionRun r{.ctx = ctx,
              .rows = p.integer("rows"),
              .cols = p.integer("cols"),
              .n = p.integer("rows") * p.integer("cols"),
              .threads = static_cast<int>(p.integer("threads")),
              .repeats = static_cast<int>(p.integer("repeats"))};
  r.total = 14.0 + double(p.list("chain").size());
  r.stores = roofline::stores_for(4.0 * double(r.n));
  r.m.error_tolerance = kErrorTolerance;
  result.backend.repeats = r.repeats;
  result.backend.timer = "steady_clock";
  const Bias chosen = p.text("bias") == "full" ? Bias::Full : Bias::Broadcast;
  const FusionTheory& theory = *result.theory_as<FusionTheory>();

  r.progress(fmt::format("filling arrays of {} x {}", r.rows, r.cols));
  MemoryLedger& ledger = ctx.ledger;
  Arrays a{HostBuffer<float>(ledger, "arrays", std::size_t(r.n)), HostBuffer<float>(ledger, "arrays", std::size_t(r.n)),
           HostBuffer<float>(ledger, "arrays", std::size_t(r.n)), HostBuffer<float>(ledger, "arrays", std::size_t(r.n)),
           HostBuffer<float>(ledger, "arrays", std::size_t(r.cols))};
  fill_seeded_uniform(a.x.span(), 1);
  fill_seeded_uniform(a.bias_full.span(), 2);
  fill_seeded_uniform(a.bias_broadcast.span(), 3);
  std::fill(a.t.data(), a.t.data() + r.n, 0.0f);  // every page touched before anything is timed
  std::fill(a.y.data(), a.y.data() + r.n, 0.0f);

  r.progress("STREAM copy: the bandwidth to compare with");
  const TimingStats copy = r.time([&] { roofline::stream_copy(a.y.data(), a.x.data(), r.n, r.threads, r.stores); }, 8);
  r.m.stream_copy_gbps = 8.0 * double(r.n) / (copy.min_us * 1e3);
  std::tie(r.m.unfused_broadcast, r.m.fused_broadcast) = measure_add_relu(r, a, Bias::Broadcast);
  std::tie(r.m.unfused_full, r.m.fused_full) = measure_add_relu(r, a, Bias::Full);
  r.m.speedup_broadcast = r.m.unfused_broadcast.us / r.m.fused_broadcast.us;
  r.m.speedup_full = r.m.unfused_full.us / r.m.fused_full.us;
  r.m.unfused = chosen == Bias::Full ? r.m.unfused_full : r.m.unfused_broadcast;
  r.m.fused = chosen == Bias::Full ? r.m.fused_full : r.m.fused_broadcast;
  r.m.unfused_us = r.m.unfused.us;
  r.m.fused_us = r.m.fused.us;
  r.m.speedup = r.m.unfused_us / r.m.fused_us;
  r.m.effective_gbps = theory.bytes_fused / (r.m.fused_us * 1e3);
  r.m.effective_fraction_of_stream = r.m.effective_gbps / r.m.stream_copy_gbps;
  r.m.speedup_bar_met = std::fabs(r.m.speedup / theory.byte_ratio - 1) <= kSpeedupTolerance;
  measure_cos_and_gelu(r, a);
  measure_chains(r, a, result);
  measure_small(r, a, chosen);
  r.m.wrong = r.m.max_abs_err > kErrorTolerance ? 1 : 0;
  add_notes(result, r);
  result.measured = make_values(std::move(r.m));
  ctx.control.progress(1.0, "done");
}

}  // namespace dlsys::fusion
