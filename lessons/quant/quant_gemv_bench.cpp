#include "lessons/quant/quant_gemv_bench.h"

#include <fmt/format.h>

#include <algorithm>

#include "engine/errors.h"
#include "engine/host_buffer.h"
#include "engine/measure.h"
#include "kernels/common/seeded_fill.h"
#include "kernels/precision/float_format.h"
#include "kernels/quant/gemv.h"
#include "kernels/quant/gemv_devices.h"
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

// The parts' weights: a 16- or 32-bit GEMV reads more bytes than one on codes (quantizing them is in its part too).
constexpr double kFloatGemvWeight = 1, kQuantizedGemvWeight = 0.8;

// Time against bytes per weight, beside the line a pure stream at the device's bandwidth (named `bandwidth_name`)
// would give.
std::vector<Series> gemv_series(const std::vector<GemvTiming>& timings, double weights, double bandwidth_gbps,
                                const char* bandwidth_name);

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

double gemv_bench_bytes(std::int64_t n, const QuantSpec& chosen) {
  const double weights = double(n) * double(n);
  const std::int64_t segment = chosen.granularity == Granularity::Block ? std::min<std::int64_t>(chosen.block, n) : n;
  const double chosen_scales = double(n) * double((n + segment - 1) / segment) * 8;  // a scale and a zero point each
  // fp32 weights, fp16 weights and their values as fp32 for the reference, int8 and int4 codes with their scales, and
  // the chosen scheme's codes (at most a byte each) with its scales.
  return weights * (4 + 2 + 4 + 1 + 0.5 + 1) + double(n) * 8 + weights / 64 * 8 + chosen_scales;
}

namespace {

// One bench's arrays (the fp32 weights, x, y and the double reference) and the timings recorded so far.
struct Bench {
  std::int64_t n;
  HostBuffer<float> w, x, y;
  std::vector<double> ref;
  GemvBench out;
  Bench(MemoryLedger& ledger, std::int64_t n_)
      : n(n_),
        w(ledger, "fp32 weights", std::size_t(n_ * n_)),
        x(ledger, "activations", std::size_t(n_)),
        y(ledger, "activations", std::size_t(n_)),
        ref(static_cast<std::size_t>(n_)) {
    fill_seeded_uniform(w.span(), 11, 0.02f);
    fill_seeded_uniform(x.span(), 12);
  }
  double weights() const { return double(n) * double(n); }

  // y's time and its error against `ref`, `bytes` read in all.
  void record(const std::string& key, const std::string& label, double bytes, const TimingStats& t, double err) {
    GemvTiming g;
    g.key = key;
    g.label = label;
    g.bytes_per_weight = bytes / weights();
    g.gemv_us = t.median_us;
    g.gemv_min_us = t.min_us;
    g.gemv_max_us = t.max_us;
    g.repeats = t.repeats;
    g.gbps = bytes / (g.gemv_us * 1e3);
    g.max_rel_err = err;
    g.wrong = !(err <= gemv_error_tolerance(n));
    out.timings.push_back(g);
  }
};

template <typename Device>
void time_fp32(Bench& b, const Device& device) {
  const std::int64_t n = b.n;
  const TimingStats t = device.fp32(b.w.data(), n, n, b.x.data(), b.y.data());
  gemv_reference(b.w.data(), n, n, b.x.data(), b.ref.data());
  b.record("fp32", Device::kFp32Label, 4 * b.weights(), t,
           gemv_max_relative_error(b.w.data(), n, n, b.x.data(), b.y.data(), b.ref.data()));
}

// The weights rounded to fp16; the reference multiplies their values by x as the device uses it.
template <typename Device>
void time_fp16(Bench& b, const Device& device, MemoryLedger& ledger) {
  const std::int64_t n = b.n;
  HostBuffer<std::uint16_t> h(ledger, "fp16 weights", std::size_t(n * n));
  std::vector<float> rounded(std::size_t(n * n));
  for (std::size_t i = 0; i < h.size(); ++i) {
    h[i] = precision::fp16_bits_from_float(b.w[i]);
    rounded[i] = precision::float_from_fp16_bits(h[i]);
  }
  std::vector<float> x_used(b.x.data(), b.x.data() + n);
  if constexpr (Device::kRoundsXToFp16)
    for (float& v : x_used) v = precision::round_to_fp16(v);
  const TimingStats t = device.fp16(h.data(), n, n, x_used.data(), b.y.data());
  gemv_reference(rounded.data(), n, n, x_used.data(), b.ref.data());
  b.record("fp16", Device::kFp16Label, 2 * b.weights(), t,
           gemv_max_relative_error(rounded.data(), n, n, x_used.data(), b.y.data(), b.ref.data()));
}

template <typename Device>
void time_quantized(Bench& b, const Device& device, const std::string& key, const QuantSpec& spec,
                    MemoryLedger& ledger) {
  const QuantizedMatrix q = quantize(b.w.data(), b.n, b.n, spec);
  const std::int64_t bytes = kernel_bytes(q);
  const LedgerRecord in_ledger(ledger, fmt::format("{} codes and scales", key), bytes);
  const TimingStats t = device.quantized(q, b.x.data(), b.y.data());
  const std::vector<float> x_used = device.quantized_x(q, b.x.data());
  gemv_reference(q, x_used.data(), b.ref.data());
  b.record(key, spec_description(spec), double(bytes), t,
           gemv_max_relative_error(q, x_used.data(), b.y.data(), b.ref.data()));
}

}  // namespace

template <typename Device>
GemvBench run_gemv_bench(const GemvBenchConfig& c, const Device& device, MemoryLedger& ledger, RunPlan& plan) {
  Bench b(ledger, c.n);
  plan.start("GEMV fp32", kFloatGemvWeight);
  const double bandwidth_before_gbps = device.bandwidth_gbps();
  time_fp32(b, device);
  plan.start("GEMV fp16", kFloatGemvWeight);
  time_fp16(b, device, ledger);
  for (const auto& [key, spec] : quantized_formats(c.chosen)) {
    plan.start("GEMV " + spec_description(spec), kQuantizedGemvWeight);
    time_quantized(b, device, key, spec, ledger);
  }
  b.out.bandwidth_gbps = std::max(bandwidth_before_gbps, device.bandwidth_gbps());
  b.out.series = gemv_series(b.out.timings, b.weights(), b.out.bandwidth_gbps, Device::kBandwidthName);
  return std::move(b.out);
}
template GemvBench run_gemv_bench(const GemvBenchConfig&, const CpuGemv&, MemoryLedger&, RunPlan&);
template GemvBench run_gemv_bench(const GemvBenchConfig&, const CudaGemv&, MemoryLedger&, RunPlan&);

namespace {

std::vector<Series> gemv_series(const std::vector<GemvTiming>& timings, double weights, double bandwidth_gbps,
                                const char* bandwidth_name) {
  std::vector<Series> out;
  Series measured{
      "gemv_time_vs_bytes", "measured (median, min-max)", "measured", "bytes read per weight", "B", "time", "us", {}};
  Series line{"gemv_bandwidth_line",
              fmt::format("bytes / {:.1f} GB/s ({})", bandwidth_gbps, bandwidth_name),
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
