#include "lessons/quant/quant_gemv_bench.h"

#include <fmt/format.h>

#include <functional>

#include "engine/errors.h"
#include "engine/host_buffer.h"
#include "engine/measure.h"
#include "kernels/common/device_buffer.h"
#include "kernels/common/seeded_fill.h"
#include "kernels/precision/float_format.h"
#include "kernels/quant/gemv.h"
#include "kernels/quant/gemv_cuda.h"
#include "kernels/roofline/roofline_cuda.h"
#include "lessons/quant/quant_spec.h"

namespace dlsys::quant {

namespace {

// A quantized matrix's buffers, recorded in the ledger for as long as it lives.
class LedgerRecord {
 public:
  LedgerRecord(MemoryLedger& ledger, std::string tag, std::int64_t bytes)
      : ledger_(ledger), tag_(std::move(tag)), bytes_(bytes) {
    ledger_.allocate(tag_, bytes_);
  }
  ~LedgerRecord() { ledger_.release(tag_, bytes_); }
  LedgerRecord(const LedgerRecord&) = delete;
  LedgerRecord& operator=(const LedgerRecord&) = delete;

 private:
  MemoryLedger& ledger_;
  std::string tag_;
  std::int64_t bytes_;
};

// What the kernel reads for a quantized matrix: codes, the expanded scales, and zero points when it has them.
std::int64_t kernel_bytes(const QuantizedMatrix& q) {
  const std::int64_t scale_bytes = std::int64_t(q.scales.size() * sizeof(float));
  return std::int64_t(q.codes.size()) + scale_bytes + (q.spec.scheme == Scheme::Nf4 ? 0 : scale_bytes);
}

struct Timed {
  TimingStats stats;
  double max_rel_err = 0;
};

// Warm-up, then `repeats` timed calls, each after the weights were flushed from the caches.
// The parts' weights: a 16- or 32-bit GEMV reads more bytes than one on codes (quantizing them is in its part too).
constexpr double kFloatGemvWeight = 1, kQuantizedGemvWeight = 0.8;

// Time against bytes per weight, beside the line a pure stream at this machine's copy bandwidth would give.
std::vector<Series> gemv_series(const std::vector<GemvTiming>& timings, double weights, double bandwidth_gbps,
                                bool gpu);

Timed time_gemv(const std::function<void()>& call, const std::vector<std::pair<const void*, std::size_t>>& buffers,
                int repeats, const RunControl& control) {
  const MeasureOptions options{.warmup = 1, .repeats = repeats, .max_total_us = 2e6};
  Timed t;
  t.stats = measure(call, options, [&] {
    control.check_cancelled();
    for (const auto& [p, bytes] : buffers) evict_from_caches(p, bytes);
  });
  return t;
}

}  // namespace

namespace {

// The formats timed after fp32 and fp16: int8, int4 and the chosen scheme when it is neither.
std::vector<std::pair<std::string, QuantSpec>> quantized_formats(const QuantSpec& chosen) {
  std::vector<std::pair<std::string, QuantSpec>> out = {{"int8", int8_gemv_spec()}, {"int4", int4_gemv_spec()}};
  if (!same_spec(chosen, int8_gemv_spec()) && !same_spec(chosen, int4_gemv_spec())) out.push_back({"chosen", chosen});
  return out;
}

}  // namespace

double gemv_bench_weight(const QuantSpec& chosen) {
  return 2 * kFloatGemvWeight + kQuantizedGemvWeight * double(quantized_formats(chosen).size());
}

QuantSpec int8_gemv_spec() { return {Scheme::Absmax, Granularity::Channel, 8, 64, false}; }
QuantSpec int4_gemv_spec() { return {Scheme::Absmax, Granularity::Block, 4, 64, false}; }

bool same_spec(const QuantSpec& a, const QuantSpec& b) {
  const bool same_block = a.granularity != Granularity::Block || a.block == b.block;
  return a.scheme == b.scheme && a.granularity == b.granularity && a.bits == b.bits && same_block &&
         a.double_quant == b.double_quant;
}

double measure_gpu_stream_triad_gbps() {
  const std::int64_t n = std::int64_t(1) << 26;
  std::vector<float> b(static_cast<std::size_t>(n)), c(static_cast<std::size_t>(n));
  fill_seeded_uniform(b, 21);
  fill_seeded_uniform(c, 22);
  dlsys::cuda::DeviceFloats da(n), db(n), dc(n);
  db.upload(b.data());
  dc.upload(c.data());
  constexpr float kScale = 2.0f;  // 2c is exact, so b + 2c rounds once on either side
  const TimingStats t = dlsys::cuda::measure_with_events(
      [&] { roofline::cuda::stream_triad(da.get(), db.get(), dc.get(), kScale, n); }, {.warmup = 1, .repeats = 10});
  std::vector<float> a(static_cast<std::size_t>(n));
  dlsys::cuda::copy_to_host(a.data(), da.get(), n);
  for (std::int64_t i = 0; i < n; i += 4093)
    if (a[std::size_t(i)] != b[std::size_t(i)] + kScale * c[std::size_t(i)])
      throw RunFailure(fmt::format("STREAM triad on the GPU wrote {} at element {}; expected {}", a[std::size_t(i)], i,
                                   b[std::size_t(i)] + kScale * c[std::size_t(i)]));
  return kStreamTriadBytes / (t.median_us * 1e3);
}

double gemv_bench_bytes(std::int64_t n, const QuantSpec& chosen) {
  const double weights = double(n) * double(n);
  const std::int64_t segment = chosen.granularity == Granularity::Block ? std::min<std::int64_t>(chosen.block, n) : n;
  const double chosen_scales = double(n) * double((n + segment - 1) / segment) * 8;  // a scale and a zero point each
  // fp32 weights, fp16 weights and their values as fp32 for the reference, int8 and int4 codes with their scales, and
  // the chosen scheme's codes (at most a byte each) with its scales.
  return weights * (4 + 2 + 4 + 1 + 0.5 + 1) + double(n) * 8 + weights / 64 * 8 + chosen_scales;
}

GemvBench run_gemv_bench(const GemvBenchConfig& c, double bandwidth_gbps, MemoryLedger& ledger, RunPlan& plan) {
  const RunControl& control = plan.control();
  const std::int64_t n = c.n;
  HostBuffer<float> w(ledger, "fp32 weights", std::size_t(n * n)), x(ledger, "activations", std::size_t(n)),
      y(ledger, "activations", std::size_t(n));
  fill_seeded_uniform(w.span(), 11, 0.02f);
  fill_seeded_uniform(x.span(), 12);
  std::vector<double> ref(static_cast<std::size_t>(n));
  GemvBench out;
  const double weights = double(n) * double(n);

  auto record = [&](const std::string& key, const std::string& label, double bytes, const Timed& t, double err) {
    GemvTiming g;
    g.key = key;
    g.label = label;
    g.bytes_per_weight = bytes / weights;
    g.gemv_us = t.stats.median_us;
    g.gemv_min_us = t.stats.min_us;
    g.gemv_max_us = t.stats.max_us;
    g.repeats = t.stats.repeats;
    g.gbps = bytes / (g.gemv_us * 1e3);
    g.max_rel_err = err;
    g.wrong = !(err <= gemv_error_tolerance(n));
    out.timings.push_back(g);
  };

  const bool gpu = c.backend == BackendKind::Cuda;
  const MeasureOptions gpu_options{.warmup = 1, .repeats = c.repeats, .max_total_us = 2e6};
  plan.start("GEMV fp32", kFloatGemvWeight);
  const Timed fp32 = gpu ? Timed{cuda::gemv_fp32(w.data(), n, n, x.data(), y.data(), gpu_options)}
                         : time_gemv([&] { gemv_fp32(w.data(), n, n, x.data(), y.data(), c.threads); },
                                     {{w.data(), w.size_bytes()}}, c.repeats, control);
  gemv_reference(w.data(), n, n, x.data(), ref.data());
  record("fp32", gpu ? "fp32 (cuBLAS)" : "fp32", 4 * weights, fp32,
         gemv_max_relative_error(w.data(), n, n, x.data(), y.data(), ref.data()));

  {
    plan.start("GEMV fp16", kFloatGemvWeight);
    HostBuffer<std::uint16_t> h(ledger, "fp16 weights", std::size_t(n * n));
    std::vector<float> rounded(std::size_t(n * n));
    for (std::size_t i = 0; i < h.size(); ++i) {
      h[i] = precision::fp16_bits_from_float(w[i]);
      rounded[i] = precision::float_from_fp16_bits(h[i]);
    }
    // cuBLAS multiplies 16-bit by 16-bit: on a GPU x is rounded to fp16 too, and the reference uses it so rounded.
    std::vector<std::uint16_t> x_bits(static_cast<std::size_t>(n));
    std::vector<float> x_used(x.data(), x.data() + n);
    if (gpu)
      for (std::size_t j = 0; j < x_used.size(); ++j) {
        x_bits[j] = precision::fp16_bits_from_float(x[j]);
        x_used[j] = precision::float_from_fp16_bits(x_bits[j]);
      }
    const Timed fp16 = gpu ? Timed{cuda::gemv_fp16(h.data(), n, n, x_bits.data(), y.data(), gpu_options)}
                           : time_gemv([&] { gemv_fp16(h.data(), n, n, x.data(), y.data(), c.threads); },
                                       {{h.data(), std::size_t(h.size_bytes())}}, c.repeats, control);
    gemv_reference(rounded.data(), n, n, x_used.data(), ref.data());
    record("fp16", gpu ? "fp16 (cuBLAS)" : "fp16", 2 * weights, fp16,
           gemv_max_relative_error(rounded.data(), n, n, x_used.data(), y.data(), ref.data()));
  }

  for (const auto& [key, spec] : quantized_formats(c.chosen)) {
    plan.start("GEMV " + spec_description(spec), kQuantizedGemvWeight);
    const QuantizedMatrix q = quantize(w.data(), n, n, spec);
    const std::int64_t bytes = kernel_bytes(q);
    const LedgerRecord in_ledger(ledger, fmt::format("{} codes and scales", key == "chosen" ? "chosen" : key), bytes);
    std::vector<std::pair<const void*, std::size_t>> buffers = {{q.codes.data(), q.codes.size()},
                                                                {q.scales.data(), q.scales.size() * sizeof(float)}};
    if (spec.scheme != Scheme::Nf4) buffers.push_back({q.zeros.data(), q.zeros.size() * sizeof(float)});
    const Timed t =
        gpu ? Timed{cuda::gemv_quantized(q, x.data(), y.data(), gpu_options)}
            : time_gemv([&] { gemv_quantized(q, x.data(), y.data(), c.threads); }, buffers, c.repeats, control);
    gemv_reference(q, x.data(), ref.data());
    record(key, spec_description(spec), double(bytes), t, gemv_max_relative_error(q, x.data(), y.data(), ref.data()));
  }
  out.series = gemv_series(out.timings, weights, bandwidth_gbps, gpu);
  return out;
}

namespace {

std::vector<Series> gemv_series(const std::vector<GemvTiming>& timings, double weights, double bandwidth_gbps,
                                bool gpu) {
  std::vector<Series> out;
  Series measured{
      "gemv_time_vs_bytes", "measured (median, min-max)", "measured", "bytes read per weight", "B", "time", "us", {}};
  Series line{"gemv_bandwidth_line",
              fmt::format("bytes / {:.1f} GB/s ({})", bandwidth_gbps, gpu ? "STREAM triad" : "copy bandwidth"),
              "theory",
              "bytes read per weight",
              "B",
              "time",
              "us",
              {}};
  for (const GemvTiming& g : timings) {
    measured.points.push_back({g.bytes_per_weight, g.gemv_us, g.gemv_min_us, g.gemv_max_us});
    Series one{"gemv_" + g.key, g.label, "measured", measured.x_label, "B", "time", "us", {}};
    one.points.push_back(measured.points.back());
    out.push_back(std::move(one));
  }
  for (double b : {0.5, 1.0, 2.0, 4.0}) {
    const double us = bandwidth_gbps > 0 ? b * weights / (bandwidth_gbps * 1e3) : 0;
    line.points.push_back({b, us, us, us});
  }
  out.push_back(std::move(measured));
  if (bandwidth_gbps > 0) out.push_back(std::move(line));
  return out;
}

}  // namespace

}  // namespace dlsys::quant
