#include "lessons/roofline/roofline_measure.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/host_buffer.h"
#include "engine/units.h"
#include "kernels/common/device_buffer.h"
#include "kernels/common/seeded_fill.h"
#include "kernels/roofline/roof_devices.h"
#include "kernels/roofline/roofline.h"
#include "kernels/roofline/roofline_math.h"
#include "lessons/roofline/roofline_measure_common.h"

namespace dlsys::roofline {

TimingStats RooflineRun::time_with(const std::function<void()>& work, int timed_calls) const {
  const MeasureOptions options{.warmup = 1, .repeats = timed_calls, .max_total_us = 1e6};
  const auto between = [&] {
    ctx.control.check_cancelled();
    if (before_timed_call) before_timed_call();
  };
  return measure(work, options, between, timer);
}

TimingStats RooflineRun::time(const std::function<void()>& work) const { return time_with(work, repeats); }

TimingStats RooflineRun::time_ceiling(const std::function<void()>& work) const {
  return time_with(work, std::max(repeats, kCeilingRepeats));
}

RoofPoint roof_point(std::string id, std::string label, std::string name, double flop, double bytes,
                     const TimingStats& t, std::string traffic) {
  RoofPoint p;
  p.id = std::move(id);
  p.label = std::move(label);
  p.name = std::move(name);
  p.flop = flop;
  p.bytes = bytes;
  p.intensity = flop / bytes;
  p.gflops = flop / (t.median_us * 1e3);
  p.gflops_best = flop / (t.min_us * 1e3);
  p.gflops_slowest = flop / (t.max_us * 1e3);
  p.traffic = std::move(traffic);
  p.error_tolerance = kErrorTolerance;
  return p;
}

void probe_fma_peak(RooflineRun& run) {
  const TimingStats t = run.time_ceiling(run.peak_call);
  run.peak_gflops = std::max(run.peak_gflops, run.peak_flop_per_call / (t.min_us * 1e3));
}

void use_cpu_peak_kernel(RooflineRun& run) {
  // About 2 ms per call at 100 GFLOP/s per thread: long enough that waking the pool is noise, short enough that
  // several calls fit between other programs' bursts.
  const std::int64_t iterations = 500'000;
  run.peak_call = [threads = run.threads] { fma_peak(threads, iterations); };
  run.peak_flop_per_call = fma_peak_flop(run.threads, iterations);
}

namespace {

StreamMeasure stream_measure(StreamKernel kernel, std::int64_t n, const TimingStats& t) {
  const double bytes = stream_bytes_per_element(kernel) * double(n);
  return {stream_name(kernel), bytes / (t.min_us * 1e3), bytes / (t.median_us * 1e3), t.median_us, t.min_us, t.max_us};
}

// Largest |out - expected| / max(1, |expected|) over evenly spread samples: every value here is of order one.
template <typename Expected>
double sampled_error(const HostView& out, std::int64_t n, Expected expected) {
  double worst = 0;
  const std::int64_t step = std::max<std::int64_t>(1, n / kErrorSamples);
  for (std::int64_t i = 0; i < n; i += step) {
    const double e = expected(i);
    worst = std::max(worst, std::fabs(double(out[i]) - e) / std::max(1.0, std::fabs(e)));
  }
  return worst;
}

// One pass of the four STREAM kernels; each kernel's output is checked against the double of its formula.
struct StreamPass {
  TimingStats copy, scale, add, triad;
  double max_rel_err = 0;
};

template <typename Device>
StreamPass stream_pass(RooflineRun& run, Device& d, std::int64_t n, const char* which) {
  float *a = d.a(), *b = d.b(), *c = d.c();
  StreamPass out;
  double& err = out.max_rel_err;
  run.progress(fmt::format("STREAM copy ({})", which));
  out.copy = run.time_ceiling([&] { d.copy(c, a); });
  {
    const HostView av = d.view(a), cv = d.view(c);
    err = std::max(err, sampled_error(cv, n, [&](std::int64_t i) { return double(av[i]); }));
  }
  run.progress(fmt::format("STREAM scale, y = 2x ({})", which));
  out.scale = run.time_ceiling([&] { d.scale(b, c, kScaleFactor); });
  {
    const HostView bv = d.view(b), cv = d.view(c);
    err = std::max(err, sampled_error(bv, n, [&](std::int64_t i) { return double(kScaleFactor) * cv[i]; }));
  }
  run.progress(fmt::format("STREAM add ({})", which));
  out.add = run.time_ceiling([&] { d.add(c, a, b); });
  {
    const HostView av = d.view(a), bv = d.view(b), cv = d.view(c);
    err = std::max(err, sampled_error(cv, n, [&](std::int64_t i) { return double(av[i]) + bv[i]; }));
  }
  run.progress(fmt::format("STREAM triad ({})", which));
  out.triad = run.time_ceiling([&] { d.triad(a, b, c, kScaleFactor); });
  {
    const HostView av = d.view(a), bv = d.view(b), cv = d.view(c);
    err = std::max(err,
                   sampled_error(av, n, [&](std::int64_t i) { return double(bv[i]) + double(kScaleFactor) * cv[i]; }));
  }
  return out;
}

const TimingStats& faster(const TimingStats& x, const TimingStats& y) { return x.min_us <= y.min_us ? x : y; }

// The STREAM rates from two passes, each kernel's faster one (other programs may have slowed either), and y = 2x
// (STREAM's scale) as a point for the roof.
void record_stream(const StreamPass& first, const StreamPass& second, std::int64_t n, RooflineMeasured& m) {
  const TimingStats& scale = faster(first.scale, second.scale);
  m.stream_kernels = {stream_measure(StreamKernel::Copy, n, faster(first.copy, second.copy)),
                      stream_measure(StreamKernel::Scale, n, scale),
                      stream_measure(StreamKernel::Add, n, faster(first.add, second.add)),
                      stream_measure(StreamKernel::Triad, n, faster(first.triad, second.triad))};
  m.stream_copy_gbps = m.stream_kernels[0].gbps;
  m.stream_scale_gbps = m.stream_kernels[1].gbps;
  m.stream_add_gbps = m.stream_kernels[2].gbps;
  m.stream_triad_gbps = m.stream_kernels[3].gbps;
  RoofPoint y2x = roof_point("y2x", "y = 2x", fmt::format("y = 2x (STREAM scale), {} elements", n), double(n),
                             8.0 * double(n), scale, "read x, write y: 8 B per element");
  y2x.max_rel_err = std::max(first.max_rel_err, second.max_rel_err);
  m.y2x_gflops = y2x.gflops;
  m.roof_points.insert(m.roof_points.begin(), std::move(y2x));
}

template <typename Device>
void measure_sweep(RooflineRun& run, Device& d, const float* x, float* y, std::int64_t n, RooflineMeasured& m) {
  const HostView xv = d.view(x);
  for (const std::int64_t k : run.params.k) {
    run.progress(fmt::format("intensity sweep: k = {}", k));
    probe_fma_peak(run);
    const TimingStats t = run.time([&] { d.family(y, x, k); });
    RoofPoint p = roof_point(fmt::format("k={}", k), fmt::format("k = {}", k),
                             fmt::format("k = {} FMAs per element", k), family_flop_per_element(k) * double(n),
                             kFamilyBytesPerElement * double(n), t, "read x, write y: 8 B per element");
    p.max_rel_err = sampled_error(d.view(y), n, [&](std::int64_t i) { return fma_family_reference(xv[i], k); });
    m.sweep_points.push_back(std::move(p));
  }
}

template <typename Device>
void measure_softmax(RooflineRun& run, Device& d, const float* x, float* y, std::int64_t n, RooflineMeasured& m) {
  const std::int64_t cols = std::min<std::int64_t>(n, kSoftmaxCols), rows = n / cols;
  run.progress(fmt::format("softmax of {} rows of {}", rows, cols));
  const TimingStats t = run.time([&] { d.softmax(y, x, rows, cols); });
  const double elements = double(rows) * double(cols);
  RoofPoint p =
      roof_point("softmax", "softmax", fmt::format("softmax, {} x {}", rows, cols), kSoftmaxFlopPerElement * elements,
                 kSoftmaxBytesPerElement * elements, t, "each row read once, written once: 8 B per element");
  // Two rows against the double reference (first and last), relative to the largest probability of the row.
  const HostView xv = d.view(x), yv = d.view(y);
  std::vector<double> ref(std::size_t(cols) * 2);
  const std::int64_t last = rows - 1;
  softmax_rows_reference(ref.data(), xv.data, 1, cols);
  softmax_rows_reference(ref.data() + cols, xv.data + last * cols, 1, cols);
  double worst = 0;
  for (int r = 0; r < 2; ++r) {
    const double* rr = ref.data() + r * cols;
    const float* yr = yv.data + (r == 0 ? 0 : last) * cols;
    const double top = *std::max_element(rr, rr + cols);
    for (std::int64_t c = 0; c < cols; ++c) worst = std::max(worst, std::fabs(yr[c] - rr[c]) / top);
  }
  p.max_rel_err = worst;
  m.roof_points.push_back(std::move(p));
}

template <typename Device>
void streams_and_sweep_on(RooflineRun& run, Device& d, std::int64_t n, RooflineMeasured& m) {
  d.fill(d.a(), 1);
  // STREAM before and after the sweep: the bandwidth ceiling is each kernel's faster pass, so a burst of other work
  // during one pass does not lower the roof under the sweep's points.
  const StreamPass first = stream_pass(run, d, n, "first pass");
  d.fill(d.a(), 2);  // triad left 8x its values in a; the sweep and softmax start from [-1, 1)
  measure_sweep(run, d, d.a(), d.b(), n, m);
  measure_softmax(run, d, d.a(), d.b(), n, m);
  const StreamPass second = stream_pass(run, d, n, "second pass");
  record_stream(first, second, n, m);
}

}  // namespace

Stores stores_for(double array_bytes) {
  return array_bytes >= kStreamingFromBytes ? Stores::Streaming : Stores::Cached;
}

namespace {

// Calls measure(run, device, n, m) on run.backend's device with three arrays of `array_bytes`.
template <typename Measure>
void on_roof_device(RooflineRun& run, std::int64_t array_bytes, RooflineMeasured& m, Measure measure) {
  const std::int64_t n = array_bytes / 4;
  run.progress(fmt::format("filling three arrays of {}", format_bytes_binary(double(array_bytes))));
  const auto on = [&](auto& device) {
    struct Unset {
      std::function<void()>& hook;
      ~Unset() { hook = nullptr; }  // the device goes when this returns or throws
    } unset{run.before_timed_call};
    run.before_timed_call = [&device] { device.before_timed_call(); };
    measure(run, device, n, m);
  };
  if (run.backend == BackendKind::Cuda) {
    GpuRoofDevice device(n);
    on(device);
  } else {
    CpuRoofDevice device(run.ctx.ledger, n, run.threads, stores_for(double(array_bytes)));
    on(device);
  }
}

}  // namespace

void measure_streams_and_sweep(RooflineRun& run, std::int64_t array_bytes, RooflineMeasured& m) {
  on_roof_device(run, array_bytes, m, [](RooflineRun& r, auto& d, std::int64_t n, RooflineMeasured& out) {
    streams_and_sweep_on(r, d, n, out);
  });
}

void measure_stream(RooflineRun& run, std::int64_t array_bytes, RooflineMeasured& m) {
  on_roof_device(run, array_bytes, m, [](RooflineRun& r, auto& d, std::int64_t n, RooflineMeasured& out) {
    d.fill(d.a(), 1);
    const StreamPass first = stream_pass(r, d, n, "first pass");
    const StreamPass second = stream_pass(r, d, n, "second pass");
    record_stream(first, second, n, out);
  });
  pick_bandwidth(m);
}

void pick_bandwidth(RooflineMeasured& m) {
  for (const StreamMeasure& s : m.stream_kernels)
    if (s.gbps > m.bandwidth_gbps) m.bandwidth_gbps = s.gbps, m.bandwidth_kernel = s.kernel;
}

void measure_overhead(RooflineRun& run, RunResult& result, RooflineMeasured& m) {
  const std::vector<std::int64_t>& sizes = run.params.tiny_sizes;
  const auto largest = static_cast<std::int64_t>(*std::max_element(sizes.begin(), sizes.end()));
  HostBuffer<float> x(run.ctx.ledger, "tiny", std::size_t(largest)), y(run.ctx.ledger, "tiny", std::size_t(largest));
  fill_seeded_uniform(x.span(), 3);
  std::fill(y.data(), y.data() + largest, 0.0f);
  Series call{"overhead_call", "y = 2x called on this thread", "measured", "elements", "", "time per call", "us", {}};
  Series pool{"overhead_pool",
              fmt::format("y = 2x handed to the pool ({} threads)", run.threads),
              "measured",
              "elements",
              "",
              "time per call",
              "us",
              {}};
  // Calls are timed in batches long enough for the clock (a call may take tens of nanoseconds).
  auto per_call = [&](const std::function<void()>& one_call) {
    int calls = 1;
    for (Stopwatch w; calls < (1 << 22); calls *= 4, w.restart()) {
      for (int i = 0; i < calls; ++i) one_call();
      if (w.elapsed_us() >= kOverheadBatchUs) break;
    }
    const TimingStats t = measure(
        [&] {
          for (int i = 0; i < calls; ++i) one_call();
        },
        MeasureOptions{.warmup = 1, .repeats = std::max(run.repeats, 3)}, [&] { run.ctx.control.check_cancelled(); });
    return SeriesPoint{0, t.median_us / calls, t.min_us / calls, t.max_us / calls};
  };
  for (double size : sizes) {
    const auto n = static_cast<std::int64_t>(size);
    run.progress(fmt::format("overhead: y = 2x on {} elements", n));
    SeriesPoint direct = per_call([&] { stream_scale(y.data(), x.data(), kScaleFactor, n, 1, Stores::Cached); });
    SeriesPoint pooled = per_call([&] { scale_on_pool(y.data(), x.data(), n, run.threads); });
    direct.x = pooled.x = size;
    call.points.push_back(direct);
    pool.points.push_back(pooled);
  }
  m.overhead_call_floor_us = INFINITY;
  m.overhead_pool_floor_us = INFINITY;
  for (const SeriesPoint& p : call.points) m.overhead_call_floor_us = std::min(m.overhead_call_floor_us, p.y_min);
  for (const SeriesPoint& p : pool.points) m.overhead_pool_floor_us = std::min(m.overhead_pool_floor_us, p.y_min);
  result.series.push_back(std::move(call));
  result.series.push_back(std::move(pool));
}

}  // namespace dlsys::roofline
