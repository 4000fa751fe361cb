#include "lessons/fusion/fusion_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "engine/host_buffer.h"
#include "engine/measure.h"
#include "engine/units.h"
#include "kernels/fusion/fusion.h"
#include "kernels/fusion/pointwise_devices.h"
#include "kernels/roofline/roofline.h"
#include "lessons/common/run_plan.h"
#include "lessons/fusion/fusion_lesson.h"
#include "lessons/fusion/fusion_size.h"
#include "lessons/roofline/last_level_cache.h"
#include "lessons/roofline/roofline_measure_common.h"

namespace dlsys::fusion {

namespace {

// Largest error a kernel may show and still be right: the vector cos, exp and tanh polynomials are good to about
// 1e-7, and a chain of eight multiply-adds adds a few roundings more.
constexpr double kErrorTolerance = 1e-5;
constexpr std::int64_t kErrorSamples = 4096;
constexpr double kSmallBatchUs = 200;  // small calls are timed in batches at least this long

// One run's state on one device (see pointwise_devices.h): the same code times the passes on the CPU or a GPU.
template <typename Device>
struct FusionRun {
  RunContext& ctx;
  const FusionParams& params;
  HostArrays& a;
  Device& device;
  int repeats = 1;
  RunPlan& plan;  // one part per progress message, each of weight 1
  FusionMeasured m;

  std::int64_t n() const { return a.n(); }
  void progress(const std::string& what) { plan.start(what); }
  // The device's own timer: the stopwatch on the CPU, CUDA events on a GPU.
  CallTimer timer() const {
    return {Device::kTimer, [this](const std::function<void()>& call) { return device.call_us(call); }};
  }
  // One warm-up call, then the run's repeats (at least `least_repeats`), stopping once timed calls took 2 s.
  TimingStats time(const std::function<void()>& work, int least_repeats = 1) {
    const MeasureOptions options{.warmup = 1, .repeats = std::max(repeats, least_repeats), .max_total_us = 2e6};
    return measure(
        work, options, [this] { ctx.control.check_cancelled(); }, timer());
  }
  // Two ways of computing the same thing, timed in alternation (engine/measure.h's measure_pair), within 4 s.
  std::pair<Timing, Timing> time_pair(const std::function<void()>& first, const std::function<void()>& second) {
    const MeasureOptions options{.warmup = 1, .repeats = repeats, .max_total_us = 4e6};
    const auto [a, b] = measure_pair(
        first, second, options, [this] { ctx.control.check_cancelled(); }, timer());
    return {spread_of(a), spread_of(b)};
  }
  // Largest |out - expected(i)| over evenly spread samples; every value here is of order one.
  void check(const float* out, std::int64_t count, const std::function<double(std::int64_t)>& expected) {
    check_with(device, out, count, expected);
  }
  void check_with(Device& on, const float* out, std::int64_t count,
                  const std::function<double(std::int64_t)>& expected) {
    const float* values = on.on_host(out, count);
    const std::int64_t step = std::max<std::int64_t>(1, count / kErrorSamples);
    for (std::int64_t i = 0; i < count; i += step)
      m.max_abs_err = std::max(m.max_abs_err, std::fabs(double(values[i]) - expected(i)));
  }
};

// y = ReLU(x + b) both ways with one bias; returns (unfused, fused) and checks both outputs.
template <typename Device>
std::pair<Timing, Timing> measure_add_relu(FusionRun<Device>& r, Bias bias) {
  Device& d = r.device;
  const float* b = d.bias(bias);
  auto expected = [&](std::int64_t i) {
    return add_bias_relu_reference(float(r.a.x_at(i)), float(r.a.bias_at(bias, i)));
  };
  r.progress(fmt::format("ReLU(x + b) unfused and fused, {} bias", bias == Bias::Full ? "full" : "broadcast"));
  auto unfused = [&] {
    d.add_bias(d.t(), d.x(), b, bias);
    d.relu(d.y(), d.t());
  };
  const auto times = r.time_pair(unfused, [&] { d.add_bias_relu(d.y(), d.x(), b, bias); });
  r.check(d.y(), r.n(), expected);  // the fused output (last written)
  unfused();
  r.check(d.y(), r.n(), expected);  // and the unfused one
  return times;
}

template <typename Device>
void measure_cos_and_gelu(FusionRun<Device>& r) {
  Device& d = r.device;
  const HostArrays& a = r.a;
  r.progress("one cos");
  r.m.cos = spread_of(r.time([&] { d.cos(d.y(), d.x()); }));
  r.check(d.y(), r.n(), [&](std::int64_t i) { return std::cos(a.x_at(i)); });
  r.progress("x.cos().cos() unfused and fused");
  std::tie(r.m.cos_cos_unfused, r.m.cos_cos_fused) = r.time_pair(
      [&] {
        d.cos(d.t(), d.x());
        d.cos(d.y(), d.t());
      },
      [&] { d.cos_cos(d.y(), d.x()); });
  r.check(d.y(), r.n(), [&](std::int64_t i) { return cos_cos_reference(float(a.x_at(i))); });
  r.check(d.t(), r.n(), [&](std::int64_t i) { return std::cos(a.x_at(i)); });
  r.progress("ReLU and GELU");
  std::tie(r.m.relu, r.m.gelu) = r.time_pair([&] { d.relu(d.t(), d.x()); }, [&] { d.gelu(d.y(), d.x()); });
  r.check(d.t(), r.n(), [&](std::int64_t i) { return std::max(0.0, a.x_at(i)); });
  r.check(d.y(), r.n(), [&](std::int64_t i) { return gelu_reference(float(a.x_at(i))); });
  r.m.cos_cos_speedup = r.m.cos_cos_unfused.us / r.m.cos_cos_fused.us;
  r.m.cos_cos_over_cos = r.m.cos_cos_fused.us / r.m.cos.us;
  r.m.gelu_over_relu = r.m.gelu.us / r.m.relu.us;
}

// Chains of L multiply-adds: L passes through memory (ping-pong between t and y) against one.
template <typename Device>
void measure_chains(FusionRun<Device>& r, RunResult& result) {
  Device& d = r.device;
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
  for (const int L : r.params.chain) {
    const double length = L;
    r.progress(fmt::format("chain of {} operations", L));
    const float* last = nullptr;  // where the unfused chain left its result: t for odd L, y for even
    auto run_unfused = [&] {
      const float* in = d.x();
      for (int l = 0; l < L; ++l) {
        float* out = l % 2 == 0 ? d.t() : d.y();
        d.chain_op(out, in, l);
        in = out;
      }
      last = in;
    };
    const auto [tu, tf] = r.time_pair(run_unfused, [&] { d.chain(d.y(), d.x(), L); });
    auto expected = [&](std::int64_t i) { return chain_reference(float(r.a.x_at(i)), L); };
    r.check(d.y(), r.n(), expected);
    run_unfused();  // once more, untimed: the fused calls may have overwritten its result
    r.check(last, r.n(), expected);
    r.m.chains.push_back({L, tu, tf});
    unfused.points.push_back({length, tu.us / 1e3, tu.min_us / 1e3, tu.max_us / 1e3});
    fused.points.push_back({length, tf.us / 1e3, tf.min_us / 1e3, tf.max_us / 1e3});
    const double bytes_ms = double(r.n()) / (r.m.stream_copy_gbps * 1e6);  // ms per byte-per-element
    const double u = chain_bytes_per_element_unfused(L) * bytes_ms, f = kChainBytesPerElementFused * bytes_ms;
    unfused_line.points.push_back({length, u, u, u});
    fused_line.points.push_back({length, f, f, f});
  }
  for (Series* s : {&unfused, &fused, &unfused_line, &fused_line}) result.series.push_back(std::move(*s));
}

// Time per call of `call`, batched: calls are repeated until a batch takes kSmallBatchUs, then batches are timed.
template <typename Device>
Timing time_per_call(FusionRun<Device>& r, Device& d, const std::function<void()>& call) {
  int calls = 1;
  auto batch = [&] {
    for (int i = 0; i < calls; ++i) call();
  };
  while (calls < (1 << 20) && d.call_us(batch) < kSmallBatchUs) calls *= 4;
  const TimingStats s = r.time(batch, 5);
  return spread_of(s, calls);
}

// ReLU(x + b) on arrays that fit in cache, time per call, and one call that moves (next to) no bytes.
template <typename Device>
void measure_small(FusionRun<Device>& r, const std::function<Device(HostArrays&)>& make_device, Bias bias) {
  const std::int64_t count = r.params.small_bytes / 4;
  const std::int64_t cols = std::min(r.a.cols, count), rows = std::max<std::int64_t>(1, count / cols);
  HostArrays small(r.ctx.ledger, "small", rows, cols);
  Device d = make_device(small);
  auto expected = [&](std::int64_t i) {
    return add_bias_relu_reference(float(small.x_at(i)), float(small.bias_at(bias, i)));
  };
  r.progress(fmt::format("ReLU(x + b) on {} x {} (in cache)", rows, cols));
  const float* b = d.bias(bias);
  r.m.small_unfused = time_per_call(r, d, [&] {
    d.add_bias(d.t(), d.x(), b, bias);
    d.relu(d.y(), d.t());
  });
  r.check_with(d, d.y(), small.n(), expected);
  r.m.small_fused = time_per_call(r, d, [&] { d.add_bias_relu(d.y(), d.x(), b, bias); });
  r.check_with(d, d.y(), small.n(), expected);
  r.m.dispatch = time_per_call(r, d, [&] { d.dispatch(); });
  r.m.dispatch_what = Device::kDispatchWhat;
  r.m.small_speedup = r.m.small_unfused.us / r.m.small_fused.us;
}

void add_notes(RunResult& result, const HostArrays& a, const FusionMeasured& m, BackendKind backend) {
  const double array = 4.0 * double(a.n());
  if (backend == BackendKind::Cpu && fusion::arrays_fit_in_cache(array))
    result.backend.notes.push_back(fmt::format(
        "x, t and y ({} each) fit in the last-level cache ({}): fusion may save less, or more, than the byte ratio",
        format_bytes_binary(array), format_bytes_binary(last_level_cache_bytes())));
  if (m.wrong) result.backend.notes.push_back("an output differs from its reference by more than rounding explains");
}

}  // namespace

double run_bytes(const FusionParams& p) {
  const double n = double(p.rows) * double(p.cols);
  // x, t, y and the full bias at both sizes, and the broadcast bias
  return 4.0 * (4 * n + double(p.cols)) + 4.0 * double(p.small_bytes) + 4.0 * double(p.cols);
}

double run_seconds_estimate(const FusionParams& p) {
  const double n = double(p.rows) * double(p.cols);
  double bytes_per_element = 16 + 8 + 20 + 12 + 8 + 16 + 8 + 8 + 8 + 8;  // ReLU(x + b) both ways, cos, relu, gelu, copy
  for (int length : p.chain) bytes_per_element += 8.0 * length + 8;
  return bytes_per_element * n * (1.0 + double(p.repeats)) / 1e9;
}

namespace {

template <typename Device>
void run_on(const FusionParams& p, RunContext& ctx, RunPlan& plan, RunResult& result, HostArrays& a, Device& device,
            const std::function<Device(HostArrays&)>& make_device) {
  FusionRun<Device> r{.ctx = ctx, .params = p, .a = a, .device = device, .repeats = p.repeats, .plan = plan};
  r.m.error_tolerance = kErrorTolerance;
  result.backend.repeats = r.repeats;
  result.backend.timer = Device::kTimer;
  const Bias chosen = p.bias;
  const FusionTheory& theory = *result.theory_as<FusionTheory>();

  r.progress("STREAM copy: the bandwidth to compare with");
  const TimingStats copy = r.time([&] { device.copy(device.y(), device.x()); }, 8);
  r.m.stream_copy_gbps = 8.0 * double(r.n()) / (copy.min_us * 1e3);
  std::tie(r.m.unfused_broadcast, r.m.fused_broadcast) = measure_add_relu(r, Bias::Broadcast);
  std::tie(r.m.unfused_full, r.m.fused_full) = measure_add_relu(r, Bias::Full);
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
  measure_cos_and_gelu(r);
  measure_chains(r, result);
  measure_small(r, make_device, chosen);
  r.m.wrong = r.m.max_abs_err > kErrorTolerance ? 1 : 0;
  add_notes(result, a, r.m, ctx.backend);
  result.measured = make_values(std::move(r.m));
}

}  // namespace

void run_fusion(const FusionParams& p, RunContext& ctx, RunResult& result) {
  // The parts, one progress message each: filling, STREAM copy, ReLU(x + b) with two biases, cos, cos cos, ReLU and
  // GELU, the chains, the small arrays.
  RunPlan plan(ctx.control, 8.0 + double(p.chain.size()));
  plan.start(fmt::format("filling arrays of {} x {}", p.rows, p.cols));
  HostArrays a(ctx.ledger, "arrays", p.rows, p.cols);
  if (ctx.backend == BackendKind::Cuda) {
    CudaPointwise device(a);
    run_on<CudaPointwise>(p, ctx, plan, result, a, device, [](HostArrays& small) { return CudaPointwise(small); });
  } else {
    const int threads = p.threads;
    CpuPointwise device(a, threads, roofline::stores_for(4.0 * double(a.n())));
    run_on<CpuPointwise>(p, ctx, plan, result, a, device,
                         [threads](HostArrays& small) { return CpuPointwise(small, threads, Stores::Cached); });
  }
  plan.finish();
}

}  // namespace dlsys::fusion
