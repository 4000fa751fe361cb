// dlsys_attention_bench: the CUDA attention variants at the shape the GPU peers were measured at (batch x heads = 16,
// d = 64; n = 1024, 4096, 16384), causal and not, in fp32 and bf16. Each variant is checked against the double
// reference at sampled rows of every head (bf16 runs and their reference see the same bf16-rounded inputs) and timed
// with CUDA events (median of 20 after 2 warm-ups). Prints a table, then one verdict line per requirement; exits 1 when
// a variant is wrong, 2 when no GPU answers.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <limits>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "engine/backend.h"
#include "kernels/attention/attention.h"
#include "kernels/attention/attention_cuda.h"

namespace {

using namespace dlsys::attention;
using cuda::Precision;
using cuda::Variant;

constexpr std::int64_t kHeads = 16, kD = 64, kRowsPerHead = 16;
const dlsys::MeasureOptions kTiming{.warmup = 2, .repeats = 20, .max_total_us = 3e6};

struct Inputs {
  std::vector<float> q, k, v;
  std::vector<std::int64_t> rows;
  std::vector<double> ref;  // (heads, rows, d)
};

Inputs make_inputs(const Problem& p, Precision precision) {
  const std::size_t count = std::size_t(kHeads * p.n * p.d);
  Inputs in{std::vector<float>(count),
            std::vector<float>(count),
            std::vector<float>(count),
            sample_rows(p.n, kRowsPerHead),
            {}};
  fill_uniform(in.q, 1);
  fill_uniform(in.k, 2);
  fill_uniform(in.v, 3);
  if (precision == Precision::Bf16)
    for (auto* x : {&in.q, &in.k, &in.v}) round_to_bf16(*x);
  const std::size_t per_head = in.rows.size() * std::size_t(p.d), head = std::size_t(p.n * p.d);
  in.ref.resize(per_head * kHeads);
  const int threads = int(std::max(1u, std::thread::hardware_concurrency()));
  for (std::int64_t h = 0; h < kHeads; ++h)
    reference_rows(p, in.q.data() + h * head, in.k.data() + h * head, in.v.data() + h * head, in.rows,
                   in.ref.data() + h * per_head, threads);
  return in;
}

double sampled_error(const Problem& p, const Inputs& in, const std::vector<float>& o) {
  const std::size_t per_head = in.rows.size() * std::size_t(p.d);
  double worst = 0;
  for (std::int64_t h = 0; h < kHeads; ++h)
    worst = std::max(worst, max_abs_error_rows(p, o.data() + h * p.n * p.d, in.rows,
                                               std::span<const double>(in.ref.data() + h * per_head, per_head)));
  return worst;
}

struct Result {
  double ms = 0, error = 0;
};

// Key: n, causal, precision, variant.
using Key = std::tuple<std::int64_t, bool, Precision, Variant>;

}  // namespace

int main() {
  const dlsys::CudaStatus& status = dlsys::cuda_status();
  if (!status.available) {
    fmt::print(stderr, "no GPU: {}\n", status.reason);
    return 2;
  }
  fmt::print("attention on {}: batch x heads = {}, d = {}; errors at {} sampled rows per head; median of {} runs\n\n",
             status.device.name, kHeads, kD, kRowsPerHead, kTiming.repeats);
  fmt::print("{:>6} {:>6} {:>5} {:<20} {:>10} {:>9} {:>11} {:>10}  {}\n", "n", "causal", "prec", "variant", "ms",
             "TFLOP/s", "/standard", "max err", "check");
  std::map<Key, Result> results;
  int wrong = 0;
  for (const std::int64_t n : {1024, 4096, 16384})
    for (const bool causal : {false, true})
      for (const Precision precision : {Precision::Fp32, Precision::Bf16}) {
        const Problem p{n, kD, causal, default_scale(kD)};
        const Inputs in = make_inputs(p, precision);
        std::vector<Variant> variants{Variant::Naive, cuda::fastest_flash(precision, kD)};
        if (precision == Precision::Fp32 && n <= 4096) variants.push_back(Variant::Flash);  // the plain kernel
        const double flops = 4.0 * double(n) * double(n) * kD * kHeads * (causal ? 0.5 : 1.0);
        double standard_ms = 0, standard_error = 0;
        for (const Variant variant : variants) {
          std::vector<float> o(in.q.size(), std::numeric_limits<float>::quiet_NaN());
          Result r;
          try {
            const auto stats = cuda::run({variant, precision, kHeads, Tiling{64, 64}}, p, in.q.data(), in.k.data(),
                                         in.v.data(), o.data(), kTiming);
            r.ms = stats.timing.median_us / 1e3;
            r.error = sampled_error(p, in, o);
          } catch (const std::exception& e) {
            fmt::print("{:>6} {:>6} {:>5} {:<20} failed: {}\n", n, causal ? 1 : 0, cuda::precision_name(precision),
                       cuda::variant_name(variant), e.what());
            ++wrong;
            continue;
          }
          const bool is_standard = variant == Variant::Naive;
          if (is_standard) standard_ms = r.ms, standard_error = r.error;
          const double bound = precision == Precision::Bf16 ? 1e-2 : 1e-4;
          const bool ok = r.error < bound && (is_standard || meets_accuracy_rule(r.error, standard_error));
          if (!ok) ++wrong;
          fmt::print("{:>6} {:>6} {:>5} {:<20} {:>10.4f} {:>9.1f} {:>11} {:>10.2e}  {}\n", n, causal ? 1 : 0,
                     cuda::precision_name(precision), cuda::variant_name(variant), r.ms, flops / (r.ms * 1e-3) / 1e12,
                     is_standard || standard_ms == 0 ? "" : fmt::format("{:.3f}", r.ms / standard_ms), r.error,
                     ok ? "ok" : "WRONG");
          results[{n, causal, precision, variant}] = r;
        }
      }

  // The requirements, at n = 4096: bf16 flash at most half of standard bf16 and within 2x of PyTorch SDPA flash
  // (0.253 ms, causal 0.195 ms, measured on an H100 80GB); fp32 flash faster than standard fp32.
  fmt::print("\n");
  auto verdict = [&](const std::string& what, Key flash, Key standard, double limit_ms) {
    const auto f = results.find(flash), s = results.find(standard);
    if (f == results.end() || s == results.end()) return fmt::print("verdict: {}: not measured\n", what);
    const double limit = std::min(limit_ms, s->second.ms * (std::get<2>(flash) == Precision::Bf16 ? 0.5 : 1.0));
    fmt::print("verdict: {}: flash {:.3f} ms, standard {:.3f} ms, limit {:.3f} ms: {}\n", what, f->second.ms,
               s->second.ms, limit, f->second.ms <= limit ? "MET" : "NOT MET");
  };
  for (const bool causal : {false, true}) {
    const double sdpa_ms = causal ? 0.195 : 0.253;
    verdict(fmt::format("bf16 n=4096 causal={} (<= half of standard, <= 2 x SDPA flash {:.3f} ms)", causal ? 1 : 0,
                        sdpa_ms),
            {4096, causal, Precision::Bf16, Variant::FlashTensor}, {4096, causal, Precision::Bf16, Variant::Naive},
            2 * sdpa_ms);
    verdict(fmt::format("fp32 n=4096 causal={} (faster than standard)", causal ? 1 : 0),
            {4096, causal, Precision::Fp32, Variant::FlashRegisters}, {4096, causal, Precision::Fp32, Variant::Naive},
            1e30);
  }
  fmt::print("{}\n", wrong == 0 ? "all variants correct" : fmt::format("{} variant(s) WRONG or failed", wrong));
  return wrong == 0 ? 0 : 1;
}
