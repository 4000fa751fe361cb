// dlsys_pointwise_bench: the fusion lesson's passes (kernels/fusion/cuda) and the roofline lesson's pointwise kernels
// (kernels/roofline/cuda) on GPU 0 at 4096^2 and 8192^2 fp32 elements: median of 20 calls, the bytes each must move,
// GB/s and its share of a STREAM triad measured on arrays of the same size. Every output is checked against its double
// reference (sampled evenly, and the last elements, which the vector kernels write one at a time). Exits 1 when an
// output is wrong, 77 when no GPU answers.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/errors.h"
#include "kernels/common/device_buffer.h"
#include "kernels/common/seeded_fill.h"
#include "kernels/fusion/fusion.h"
#include "kernels/fusion/fusion_cuda.h"
#include "kernels/roofline/roofline.h"
#include "kernels/roofline/roofline_cuda.h"
#include "kernels/roofline/roofline_math.h"

using namespace dlsys;

namespace {

constexpr int kRepeats = 20;
constexpr double kFusedShareAtLeast = 0.85;  // the fused ReLU(x + b) moves its bytes at 85 % of STREAM triad or more
constexpr double kTolerance = 1e-5;          // as the fusion lesson: cosf, tanhf and eight multiply-adds in fp32
constexpr std::int64_t kSamples = 1 << 18;

struct Arrays {
  std::int64_t rows, cols, n;
  std::vector<float> x, b_row, b_full;
  cuda::DeviceFloats dx, db_row, db_full, dt, dy, dz;
  Arrays(std::int64_t r, std::int64_t c)
      : rows(r),
        cols(c),
        n(r * c),
        x(std::size_t(r * c)),
        b_row(std::size_t(c)),
        b_full(std::size_t(r * c)),
        dx(r * c),
        db_row(c),
        db_full(r * c),
        dt(r * c),
        dy(r * c),
        dz(r * c) {
    fill_seeded_uniform(x, 1);
    fill_seeded_uniform(b_full, 2);
    fill_seeded_uniform(b_row, 3);
    dx.upload(x.data());
    db_row.upload(b_row.data());
    db_full.upload(b_full.data());
  }
};

struct Bench {
  Arrays& a;
  double triad_gbps = 0;
  bool wrong = false;
  double fused_share = 0;

  // Times `call`, then checks `out` against `expected(i)` at evenly spread elements and the last four.
  void run(const std::string& name, double bytes_per_element, const std::function<void()>& call, const float* out,
           const std::function<double(std::int64_t)>& expected) {
    const TimingStats t = cuda::measure_with_events(call, MeasureOptions{.warmup = 2, .repeats = kRepeats});
    std::vector<float> host(static_cast<std::size_t>(a.n));
    cuda::copy_to_host(host.data(), out, a.n);
    double err = 0;
    auto check = [&](std::int64_t i) {
      const double e = expected(i);
      err = std::max(err, std::fabs(double(host[std::size_t(i)]) - e) / std::max(1.0, std::fabs(e)));
      if (std::isnan(host[std::size_t(i)])) err = INFINITY;
    };
    for (std::int64_t i = 0; i < a.n; i += std::max<std::int64_t>(1, a.n / kSamples)) check(i);
    for (std::int64_t i = std::max<std::int64_t>(0, a.n - 4); i < a.n; ++i) check(i);
    const bool bad = !(err <= kTolerance);
    wrong = wrong || bad;
    const double gbps = bytes_per_element * double(a.n) / (t.median_us * 1e3);
    fmt::print("  {:<34} {:>9.1f} {:>6.0f} {:>8.0f} {:>7.0f}% {:>9.2g}  {}\n", name, t.median_us, bytes_per_element,
               gbps, 100 * gbps / triad_gbps, err, bad ? "WRONG" : "ok");
    if (name.rfind("fused ReLU(x + b), row bias", 0) == 0) fused_share = gbps / triad_gbps;
  }
};

double relu_of_sum(float x, float b) { return fusion::add_bias_relu_reference(x, b); }

// The roofline lesson's pointwise kernels on the same arrays.
void run_roofline_kernels(Bench& bench, Arrays& a) {
  float *x = a.dx.get(), *y = a.dy.get();
  const float* b_full = a.db_full.get();
  const std::int64_t n = a.n;
  auto x_at = [&](std::int64_t i) { return a.x[std::size_t(i)]; };
  bench.run(
      "STREAM copy", 8, [&] { roofline::cuda::stream_copy(y, x, n); }, y, [&](std::int64_t i) { return x_at(i); });
  bench.run(
      "STREAM scale (y = 2x)", 8, [&] { roofline::cuda::stream_scale(y, x, 2.0f, n); }, y,
      [&](std::int64_t i) { return 2.0 * x_at(i); });
  bench.run(
      "STREAM add", 12, [&] { roofline::cuda::stream_add(y, x, b_full, n); }, y,
      [&](std::int64_t i) { return double(x_at(i)) + a.b_full[std::size_t(i)]; });
  bench.run(
      "STREAM triad", 12, [&] { roofline::cuda::stream_triad(y, x, b_full, 2.0f, n); }, y,
      [&](std::int64_t i) { return double(x_at(i)) + 2.0 * a.b_full[std::size_t(i)]; });
  for (const std::int64_t k : {std::int64_t(1), std::int64_t(16)})
    bench.run(
        fmt::format("intensity family, k = {}", k), 8, [&] { roofline::cuda::fma_family(y, x, n, k); }, y,
        [&](std::int64_t i) { return roofline::fma_family_reference(x_at(i), k); });
}

bool bench_size(std::int64_t side) {
  Arrays a(side, side);
  float *x = a.dx.get(), *t = a.dt.get(), *y = a.dy.get(), *z = a.dz.get();
  const float *b_row = a.db_row.get(), *b_full = a.db_full.get();
  const std::int64_t n = a.n, cols = a.cols;
  // STREAM triad on arrays of this size: the ceiling every pass is compared with.
  const TimingStats triad =
      cuda::measure_with_events([&] { roofline::cuda::stream_triad(z, x, a.db_full.get(), 2.0f, n); },
                                MeasureOptions{.warmup = 2, .repeats = kRepeats});
  Bench bench{a, 12.0 * double(n) / (triad.median_us * 1e3)};
  fmt::print("\n{} x {} fp32 ({} MiB per array); STREAM triad {:.0f} GB/s\n", side, side, 4 * n >> 20,
             bench.triad_gbps);
  fmt::print("  {:<34} {:>9} {:>6} {:>8} {:>8} {:>9}  {}\n", "kernel", "median us", "B/elt", "GB/s", "% triad", "error",
             "check");
  auto x_at = [&](std::int64_t i) { return a.x[std::size_t(i)]; };
  using fusion::Bias;
  // fusion passes
  bench.run(
      "unfused x + b, ReLU: row bias", 16,
      [&] {
        fusion::cuda::add_bias(t, x, b_row, side, side, Bias::Broadcast);
        fusion::cuda::relu_pass(y, t, n);
      },
      y, [&](std::int64_t i) { return relu_of_sum(x_at(i), a.b_row[std::size_t(i % cols)]); });
  bench.run(
      "fused ReLU(x + b), row bias", 8, [&] { fusion::cuda::add_bias_relu(y, x, b_row, side, side, Bias::Broadcast); },
      y, [&](std::int64_t i) { return relu_of_sum(x_at(i), a.b_row[std::size_t(i % cols)]); });
  bench.run(
      "unfused x + b, ReLU: full bias", 20,
      [&] {
        fusion::cuda::add_bias(t, x, b_full, side, side, Bias::Full);
        fusion::cuda::relu_pass(y, t, n);
      },
      y, [&](std::int64_t i) { return relu_of_sum(x_at(i), a.b_full[std::size_t(i)]); });
  bench.run(
      "fused ReLU(x + b), full bias", 12, [&] { fusion::cuda::add_bias_relu(y, x, b_full, side, side, Bias::Full); }, y,
      [&](std::int64_t i) { return relu_of_sum(x_at(i), a.b_full[std::size_t(i)]); });
  bench.run(
      "cos", 8, [&] { fusion::cuda::cos_pass(y, x, n); }, y, [&](std::int64_t i) { return std::cos(double(x_at(i))); });
  bench.run(
      "cos, cos unfused", 16,
      [&] {
        fusion::cuda::cos_pass(t, x, n);
        fusion::cuda::cos_pass(y, t, n);
      },
      y, [&](std::int64_t i) { return fusion::cos_cos_reference(x_at(i)); });
  bench.run(
      "cos.cos fused", 8, [&] { fusion::cuda::cos_cos(y, x, n); }, y,
      [&](std::int64_t i) { return fusion::cos_cos_reference(x_at(i)); });
  bench.run(
      "ReLU", 8, [&] { fusion::cuda::relu_pass(y, x, n); }, y,
      [&](std::int64_t i) { return std::max(0.0, double(x_at(i))); });
  bench.run(
      "GELU", 8, [&] { fusion::cuda::gelu_pass(y, x, n); }, y,
      [&](std::int64_t i) { return fusion::gelu_reference(x_at(i)); });
  bench.run(
      "chain of 8 multiply-adds, fused", 8, [&] { fusion::cuda::chain_fused(y, x, n, 8); }, y,
      [&](std::int64_t i) { return fusion::chain_reference(x_at(i), 8); });
  bench.run(
      "copy (fusion)", 8, [&] { fusion::cuda::copy(y, x, n); }, y, [&](std::int64_t i) { return x_at(i); });
  run_roofline_kernels(bench, a);
  fmt::print("  verdict: fused ReLU(x + b) with a row bias at {:.0f}% of STREAM triad (at least {:.0f}%): {}\n",
             100 * bench.fused_share, 100 * kFusedShareAtLeast,
             bench.fused_share >= kFusedShareAtLeast ? "met" : "NOT met");
  return !bench.wrong;
}

}  // namespace

int main() {
  const CudaStatus& status = cuda_status();
  if (!status.available) {
    fmt::print("dlsys_pointwise_bench: no GPU answers ({}); nothing to measure\n", status.plain_reason);
    return 77;
  }
  try {
    fmt::print("pointwise kernels on {}: median of {} calls; bytes per element as each pass must move them\n",
               status.device.name, kRepeats);
    bool right = true;
    for (const std::int64_t side : {std::int64_t(4096), std::int64_t(8192)}) right = bench_size(side) && right;
    fmt::print("\nevery output matches its reference: {}\n", right ? "yes" : "NO");
    return right ? 0 : 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "dlsys_pointwise_bench: {}\n", e.what());
    return 3;
  }
}
