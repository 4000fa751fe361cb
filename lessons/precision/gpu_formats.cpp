#include "lessons/precision/gpu_formats.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <vector>

#include "kernels/common/seeded_fill.h"
#include "kernels/precision/float_format.h"

namespace dlsys::precision {

namespace {

// Every 4096th fp32 bit pattern (about a million values across every exponent, both signs, subnormals, infinities
// and NaNs), and the patterns on either side of each: ties and near-ties land among them.
constexpr std::uint64_t kPatternStride = 4096;

std::vector<float> sweep_of_patterns() {
  std::vector<float> values;
  for (std::uint64_t bits = 0; bits < (std::uint64_t(1) << 32); bits += kPatternStride)
    for (std::uint64_t near : {bits, bits + 1, bits + kPatternStride - 1})
      values.push_back(std::bit_cast<float>(std::uint32_t(near)));
  return values;
}

// Two 16-bit results agree when their bits are equal, or when both are NaN (a NaN's payload is not specified).
bool agree(std::uint16_t a, std::uint16_t b, float (*decode)(std::uint16_t)) {
  return a == b || (std::isnan(decode(a)) && std::isnan(decode(b)));
}

// |c_ij - sum_l a_il b_lj| / sum_l |a_il b_lj| at sampled entries, against the fp32 inputs in double: what the
// format's rounding of the inputs (and the GEMM's own) costs.
double sampled_gemm_error(std::int64_t n, const std::vector<float>& a, const std::vector<float>& b,
                          const std::vector<float>& c) {
  double worst = 0;
  for (std::int64_t sample = 0; sample < 256; ++sample) {
    const std::int64_t i = (sample * 7919) % n, j = (sample * 104729) % n;
    double sum = 0, magnitude = 0;
    for (std::int64_t l = 0; l < n; ++l) {
      const double product = double(a[std::size_t(i * n + l)]) * double(b[std::size_t(l * n + j)]);
      sum += product;
      magnitude += std::fabs(product);
    }
    worst = std::max(worst, std::fabs(c[std::size_t(i * n + j)] - sum) / std::max(magnitude, 1e-30));
  }
  return worst;
}

}  // namespace

GpuFormats measure_gpu_formats(const CudaPrecision& device, std::int64_t n, int repeats, RunPlan& plan) {
  using cuda::GemmFormat;
  constexpr GemmFormat kFormats[] = {GemmFormat::Fp32, GemmFormat::Tf32, GemmFormat::Fp16, GemmFormat::Bf16};
  const double part_weight = kGpuFormatsWeight / double(std::size(kFormats) + 1);
  GpuFormats g;
  plan.start("fp16 and bf16 conversions on the GPU against the software rounding", part_weight);
  const std::vector<float> values = sweep_of_patterns();
  const cuda::DeviceRounding rounded = device.round(values);
  g.values_checked = std::int64_t(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!agree(rounded.fp16_bits[i], fp16_bits_from_float(values[i]), float_from_fp16_bits)) ++g.fp16_mismatches;
    if (!agree(rounded.bf16_bits[i], bf16_bits_from_float(values[i]), float_from_bf16_bits)) ++g.bf16_mismatches;
  }
  std::vector<float> a(static_cast<std::size_t>(n * n)), b(a.size()), c(a.size());
  fill_seeded_uniform(a, 31);
  fill_seeded_uniform(b, 32);
  g.gemm_n = n;
  for (const GemmFormat format : kFormats) {
    plan.start(fmt::format("cuBLAS GEMM {} x {} in {}", n, n, cuda::gemm_format_name(format)), part_weight);
    const TimingStats t =
        device.gemm(format, n, a.data(), b.data(), c.data(), {.warmup = 1, .repeats = repeats, .max_total_us = 2e6});
    const double flop = 2.0 * double(n) * double(n) * double(n);
    g.gemm.push_back({cuda::gemm_format_name(format), flop / (t.median_us * 1e6), flop / (t.min_us * 1e6),
                      sampled_gemm_error(n, a, b, c)});
  }
  return g;
}

}  // namespace dlsys::precision
