// dlsys_quant_bench: weight-only GEMV at batch 1 on GPU 0, y = W x with W n x n (default 8192), in fp32 and fp16
// (cuBLAS) and in int8, int4 and NF4 codes (the lab's kernel, kernels/quant/cuda). Each format: the median of 20 calls,
// each after a buffer twice the L2 cache's size was read, the bytes it must read and write (codes, scales, zero points,
// x, y), GB/s, its share of a STREAM triad measured here with the roofline lesson's kernel, and its largest error
// against the double reference of its own weights. The lab's formats run on every shape of its kernel (gemv_cuda.h's
// kGemvShapes), each printed, then the x-resident kernel (x in registers, rows streamed past it), and the verdicts take
// the variant the lessons use. Exits 1 when a result is wrong, 77 when no GPU answers. Usage: dlsys_quant_bench [n]
//        dlsys_quant_bench n variant   one call of one variant per format, checked, for a profiler to look at
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/errors.h"
#include "kernels/common/device_buffer.h"
#include "kernels/common/seeded_fill.h"
#include "kernels/precision/float_format.h"
#include "kernels/quant/gemv.h"
#include "kernels/quant/gemv_cuda.h"
#include "kernels/quant/quantize.h"
#include "kernels/roofline/roofline_cuda.h"

using namespace dlsys;

namespace {

constexpr int kRepeats = 20;
constexpr double kStreamShareAtLeast = 0.70;  // the lab's kernels read at least 70 % of STREAM triad's bandwidth

struct Row {
  std::string name;
  double us = 0, min_us = 0, bytes = 0, err = 0;
  bool wrong = false;
};

// STREAM triad a = b + s c on three arrays of 2^26 floats (256 MiB each, far past any L2): GB/s of its median call.
double stream_triad_gbps() {
  const std::int64_t n = std::int64_t(1) << 26;
  std::vector<float> host(static_cast<std::size_t>(n));
  fill_seeded_uniform(host, 1);
  cuda::DeviceFloats a(n), b(n), c(n);
  b.upload(host.data());
  c.upload(host.data());
  const TimingStats t =
      cuda::measure_with_events([&] { roofline::cuda::stream_triad(a.get(), b.get(), c.get(), 2.0f, n); },
                                MeasureOptions{.warmup = 2, .repeats = kRepeats});
  std::vector<float> out(static_cast<std::size_t>(n));
  cuda::copy_to_host(out.data(), a.get(), n);
  for (std::int64_t i = 0; i < n; i += 4099)
    if (out[std::size_t(i)] != host[std::size_t(i)] + 2.0f * host[std::size_t(i)])
      throw RunFailure(fmt::format("STREAM triad wrote {} at {}", out[std::size_t(i)], i));
  return 12.0 * double(n) / (t.median_us * 1e3);
}

double quantized_bytes(const quant::QuantizedMatrix& q) {
  const double scales = 4.0 * double(q.scales.size());
  return double(q.codes.size()) + scales + (q.spec.scheme == quant::Scheme::Nf4 ? 0 : scales);
}

using quant::Granularity;
using quant::Scheme;
const std::pair<const char*, quant::QuantSpec> kFormats[] = {
    {"int8 per row (lab)", {Scheme::Absmax, Granularity::Channel, 8, 64, false}},
    {"int4 blocks of 64 (lab)", {Scheme::Absmax, Granularity::Block, 4, 64, false}},
    {"nf4 blocks of 64 (lab)", {Scheme::Nf4, Granularity::Block, 4, 64, false}},
};

// One call of `variant` per format, without warm-up, each checked: what a profiler filtering on the kernel sees.
int profile_one_variant(std::int64_t n, int variant) {
  std::vector<float> w(std::size_t(n * n)), x(static_cast<std::size_t>(n)), y(static_cast<std::size_t>(n));
  std::vector<double> ref(static_cast<std::size_t>(n));
  fill_seeded_uniform(w, 11, 0.02f);
  fill_seeded_uniform(x, 12);
  bool wrong = false;
  for (const auto& [name, spec] : kFormats) {
    const quant::QuantizedMatrix q = quant::quantize(w.data(), n, n, spec);
    quant::gemv_reference(q, x.data(), ref.data());
    const TimingStats t =
        quant::cuda::gemv_quantized(q, x.data(), y.data(), MeasureOptions{.warmup = 0, .repeats = 1}, variant);
    const double err = quant::gemv_max_relative_error(q, x.data(), y.data(), ref.data());
    wrong = wrong || !(err <= quant::gemv_error_tolerance(n));
    fmt::print("{} variant {} ({}): {:.2f} us, error {:.2g}\n", name, variant, quant::cuda::gemv_variant_name(variant),
               t.median_us, err);
  }
  return wrong ? 1 : 0;
}

// The problem every format solves: W (n x n) and x, seeded, and what each call reads and writes besides the weights.
struct Problem {
  std::int64_t n = 0;
  std::vector<float> w, x;
  double vector_bytes() const { return 4.0 * double(n) * 2; }  // x read, y written, fp32
  double tolerance() const { return quant::gemv_error_tolerance(n); }
};

const MeasureOptions kOptions{.warmup = 2, .repeats = kRepeats};

Row measure_fp32(const Problem& pr) {
  const std::int64_t n = pr.n;
  std::vector<float> y(static_cast<std::size_t>(n));
  std::vector<double> ref(static_cast<std::size_t>(n));
  const TimingStats t = quant::cuda::gemv_fp32(pr.w.data(), n, n, pr.x.data(), y.data(), kOptions);
  quant::gemv_reference(pr.w.data(), n, n, pr.x.data(), ref.data());
  const double err = quant::gemv_max_relative_error(pr.w.data(), n, n, pr.x.data(), y.data(), ref.data());
  return {"fp32 (cuBLAS)",         t.median_us, t.min_us, 4.0 * double(pr.w.size()) + pr.vector_bytes(), err,
          !(err <= pr.tolerance())};
}

// W and x rounded to fp16, checked against the double reference of the rounded values.
Row measure_fp16(const Problem& pr) {
  const std::int64_t n = pr.n;
  std::vector<std::uint16_t> h(pr.w.size()), x_bits(pr.x.size());
  std::vector<float> rounded(pr.w.size()), x_used(pr.x.size()), y(static_cast<std::size_t>(n));
  std::vector<double> ref(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < pr.w.size(); ++i) {
    h[i] = precision::fp16_bits_from_float(pr.w[i]);
    rounded[i] = precision::float_from_fp16_bits(h[i]);
  }
  for (std::size_t j = 0; j < pr.x.size(); ++j) {
    x_bits[j] = precision::fp16_bits_from_float(pr.x[j]);
    x_used[j] = precision::float_from_fp16_bits(x_bits[j]);
  }
  const TimingStats t = quant::cuda::gemv_fp16(h.data(), n, n, x_bits.data(), y.data(), kOptions);
  quant::gemv_reference(rounded.data(), n, n, x_used.data(), ref.data());
  const double err = quant::gemv_max_relative_error(rounded.data(), n, n, x_used.data(), y.data(), ref.data());
  return {"fp16 (cuBLAS)",
          t.median_us,
          t.min_us,
          2.0 * double(pr.w.size()) + 2.0 * double(n) + 4.0 * double(n),
          err,
          !(err <= pr.tolerance())};
}

// A format of the lab's kernel on every variant (gemv_cuda.h).
struct Format {
  const char* name;
  int lesson_shape;  // the variant the lessons use for this format
  std::vector<Row> variants;
};

std::vector<Format> measure_formats(const Problem& pr) {
  const std::int64_t n = pr.n;
  std::vector<float> y(static_cast<std::size_t>(n));
  std::vector<double> ref(static_cast<std::size_t>(n));
  std::vector<Format> out;
  for (const auto& [name, spec] : kFormats) {
    const quant::QuantizedMatrix q = quant::quantize(pr.w.data(), n, n, spec);
    quant::gemv_reference(q, pr.x.data(), ref.data());
    Format f{name, quant::cuda::lesson_gemv_shape(spec), {}};
    for (int v = 0; v < quant::cuda::kGemvVariantCount; ++v) {
      std::fill(y.begin(), y.end(), 1e30f);
      const TimingStats t = quant::cuda::gemv_quantized(q, pr.x.data(), y.data(), kOptions, v);
      const double err = quant::gemv_max_relative_error(q, pr.x.data(), y.data(), ref.data());
      f.variants.push_back({fmt::format("  shape {} ({})", v, quant::cuda::gemv_variant_name(v)), t.median_us, t.min_us,
                            quantized_bytes(q) + pr.vector_bytes(), err, !(err <= pr.tolerance())});
    }
    out.push_back(std::move(f));
  }
  return out;
}

void print_header() {
  fmt::print("{:<32} {:>10} {:>10} {:>10} {:>9} {:>9} {:>10}  {}\n", "format", "median us", "best us", "MB moved",
             "GB/s", "% triad", "error", "check");
}
void print_row(const Row& r, double triad_gbps) {
  const double gbps = r.bytes / (r.us * 1e3);
  fmt::print("{:<32} {:>10.2f} {:>10.2f} {:>10.2f} {:>9.0f} {:>8.0f}% {:>10.2g}  {}\n", r.name, r.us, r.min_us,
             r.bytes / 1e6, gbps, 100 * gbps / triad_gbps, r.err, r.wrong ? "WRONG" : "ok");
}

// rows: fp32, fp16, then the lessons' variant of int8, int4 and NF4.
void print_verdicts(const std::vector<Row>& rows, const std::vector<Format>& quantized, double triad_gbps,
                    double tolerance) {
  const Row &fp16 = rows[1], &int8 = rows[2], &int4 = rows[3], &nf4 = rows[4];
  fmt::print("\nverdicts (tolerance {:.2g} of the terms' size):\n", tolerance);
  for (const Row* r : {&int8, &int4, &nf4}) {
    const double share = r->bytes / (r->us * 1e3) / triad_gbps;
    fmt::print("  {} reads at {:.0f}% of STREAM triad (at least {:.0f}%): {}\n", r->name, 100 * share,
               100 * kStreamShareAtLeast, share >= kStreamShareAtLeast ? "met" : "NOT met");
  }
  const bool ordered = int4.us < int8.us && int8.us < fp16.us;
  fmt::print("  time follows bytes per weight, int4 {:.1f} < int8 {:.1f} < fp16 {:.1f} us: {}\n", int4.us, int8.us,
             fp16.us, ordered ? "met" : "NOT met");
  fmt::print("  nf4 {:.1f} us against int4 {:.1f} us (same codes, a table look-up instead of an offset)\n", nf4.us,
             int4.us);
  for (const Format& f : quantized) {
    std::size_t fastest = 0;
    for (std::size_t v = 1; v < f.variants.size(); ++v)
      if (f.variants[v].us < f.variants[fastest].us) fastest = v;
    fmt::print("  fastest shape for {}: {} ({:.1f} us); the lessons use {} ({:.1f} us)\n", f.name, fastest,
               f.variants[fastest].us, f.lesson_shape, f.variants[std::size_t(f.lesson_shape)].us);
  }
}

// Every format and variant, the lessons' variant beside cuBLAS, the verdicts; 1 when a result is wrong.
int bench_all(std::int64_t n, const std::string& device) {
  fmt::print("weight-only GEMV y = W x, W {} x {}, on {}; median of {} calls, 2 x L2 read before each\n", n, n, device,
             kRepeats);
  const double triad_gbps = stream_triad_gbps();
  fmt::print("STREAM triad (roofline kernel, 3 x 256 MiB): {:.0f} GB/s\n\n", triad_gbps);
  Problem pr{n, std::vector<float>(std::size_t(n * n)), std::vector<float>(static_cast<std::size_t>(n))};
  fill_seeded_uniform(pr.w, 11, 0.02f);
  fill_seeded_uniform(pr.x, 12);
  std::vector<Row> rows{measure_fp32(pr), measure_fp16(pr)};
  const std::vector<Format> quantized = measure_formats(pr);
  for (const Format& f : quantized) {
    Row lesson = f.variants[std::size_t(f.lesson_shape)];
    lesson.name = fmt::format("{} [{}]", f.name, f.lesson_shape);
    rows.push_back(lesson);
  }
  bool wrong = false;
  fmt::print(
      "every kernel shape (rows per warp r, warps per row w/r, loads in flight ld, threads t, prefetch pf), then the "
      "x-resident kernel:\n");
  print_header();
  for (const Format& f : quantized) {
    fmt::print("{}\n", f.name);
    for (const Row& r : f.variants) {
      print_row(r, triad_gbps);
      wrong = wrong || r.wrong;
    }
  }
  fmt::print("\nthe lessons' shapes [in brackets]:\n");
  print_header();
  for (const Row& r : rows) {
    print_row(r, triad_gbps);
    wrong = wrong || r.wrong;
  }
  print_verdicts(rows, quantized, triad_gbps, pr.tolerance());
  fmt::print("  every result matches its reference: {}\n", wrong ? "NO" : "yes");
  return wrong ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const CudaStatus& status = cuda_status();
  if (!status.available) {
    fmt::print("dlsys_quant_bench: no GPU answers ({}); nothing to measure\n", status.plain_reason);
    return 77;
  }
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 8192;
  if (n < 1 || n > 32768) {
    fmt::print(stderr, "dlsys_quant_bench: n = '{}' is not allowed; allowed: 1 to 32768\n", argc > 1 ? argv[1] : "");
    return 2;
  }
  const bool one_variant = argc > 2;
  char* variant_end = nullptr;
  const long only_variant = one_variant ? std::strtol(argv[2], &variant_end, 10) : 0;
  if (one_variant && (variant_end == argv[2] || *variant_end != '\0' || only_variant < 0 ||
                      only_variant >= quant::cuda::kGemvVariantCount)) {
    fmt::print(stderr, "dlsys_quant_bench: variant '{}' is not allowed; allowed: 0 to {}\n", argv[2],
               quant::cuda::kGemvVariantCount - 1);
    return 2;
  }
  try {
    return one_variant ? profile_one_variant(n, int(only_variant)) : bench_all(n, status.device.name);
  } catch (const std::exception& e) {
    fmt::print(stderr, "dlsys_quant_bench: {}\n", e.what());
    return 3;
  }
}
