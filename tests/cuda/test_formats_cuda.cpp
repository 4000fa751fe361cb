// The 16-bit formats and quantized GEMVs on a GPU: CUDA's conversions against the lab's software rounding bit for
// bit, cuBLAS GEMMs on each format's storage against the double reference within the format's rounding, the GEMV
// kernels against the dequantized double reference at awkward sizes, and the precision and quant lessons run whole
// on --backend cuda.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "kernels/common/seeded_fill.h"
#include "kernels/precision/float_format.h"
#include "kernels/precision/precision_cuda.h"
#include "kernels/quant/gemv.h"
#include "kernels/quant/gemv_cuda.h"
#include "tests/support/cli_capture.h"

using namespace dlsys;

TEST_CASE("CUDA's fp16 and bf16 conversions equal the software rounding, bit for bit") {
  std::vector<float> values;
  for (std::uint64_t bits = 0; bits < (std::uint64_t(1) << 32); bits += 65537)
    values.push_back(std::bit_cast<float>(std::uint32_t(bits)));
  for (float v : {0.0f, -0.0f, 65504.0f, 65520.0f, 65519.99f, 5.96e-8f, 2.98e-8f, 2.9802322e-8f, 1.0f + 0x1p-11f})
    values.push_back(v);
  const precision::cuda::DeviceRounding device = precision::cuda::round_on_device(values);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(values[i])) continue;  // a NaN's payload is not specified
    INFO("value ", values[i]);
    CHECK(device.fp16_bits[i] == precision::fp16_bits_from_float(values[i]));
    CHECK(device.bf16_bits[i] == precision::bf16_bits_from_float(values[i]));
  }
}

TEST_CASE("cuBLAS GEMMs on FP32, TF32, FP16 and BF16 storage stay within their inputs' rounding") {
  const std::int64_t n = 257;  // not a multiple of any tile
  std::vector<float> a(static_cast<std::size_t>(n * n)), b(a.size()), c(a.size());
  fill_seeded_uniform(a, 1);
  fill_seeded_uniform(b, 2);
  using precision::cuda::GemmFormat;
  // Relative to sum |a b|: fp32 a few ulps of accumulation, tf32 and fp16 about 2^-11 per input, bf16 2^-8.
  const std::pair<GemmFormat, double> formats[] = {
      {GemmFormat::Fp32, 1e-5}, {GemmFormat::Tf32, 2e-3}, {GemmFormat::Fp16, 2e-3}, {GemmFormat::Bf16, 1.5e-2}};
  for (const auto& [format, tolerance] : formats) {
    precision::cuda::gemm(format, n, a.data(), b.data(), c.data(), {.warmup = 1, .repeats = 2});
    double worst = 0;
    for (std::int64_t i = 0; i < n; i += 17)
      for (std::int64_t j = 0; j < n; j += 13) {
        double sum = 0, magnitude = 0;
        for (std::int64_t l = 0; l < n; ++l) {
          const double p = double(a[std::size_t(i * n + l)]) * b[std::size_t(l * n + j)];
          sum += p;
          magnitude += std::fabs(p);
        }
        worst = std::max(worst, std::fabs(c[std::size_t(i * n + j)] - sum) / magnitude);
      }
    INFO(precision::cuda::gemm_format_name(format), " error ", worst);
    CHECK(worst <= tolerance);
  }
}

TEST_CASE("CUDA GEMVs match the double reference of their own weights at awkward sizes") {
  using quant::Granularity;
  using quant::Scheme;
  const quant::QuantSpec specs[] = {{Scheme::Absmax, Granularity::Channel, 8, 64, false},
                                    {Scheme::Absmax, Granularity::Block, 4, 64, false},
                                    {Scheme::Affine, Granularity::Block, 4, 32, false},
                                    {Scheme::Nf4, Granularity::Block, 4, 64, true},
                                    {Scheme::Affine, Granularity::Tensor, 3, 64, false}};
  const MeasureOptions options{.warmup = 1, .repeats = 2};
  // 96 and 1024 columns split into whole 16-byte loads of codes (the vector kernel); the others do not.
  for (const auto& [rows, cols] :
       {std::pair<std::int64_t, std::int64_t>{1, 1}, {7, 33}, {3, 96}, {129, 1000}, {33, 1024}, {1024, 4097}}) {
    std::vector<float> w(static_cast<std::size_t>(rows * cols)), x(static_cast<std::size_t>(cols)),
        y(static_cast<std::size_t>(rows));
    std::vector<double> ref(y.size());
    fill_seeded_uniform(w, 3, 0.02f);
    fill_seeded_uniform(x, 4);
    quant::cuda::gemv_fp32(w.data(), rows, cols, x.data(), y.data(), options);
    quant::gemv_reference(w.data(), rows, cols, x.data(), ref.data());
    CHECK(quant::gemv_max_relative_error(w.data(), rows, cols, x.data(), y.data(), ref.data()) <=
          quant::gemv_error_tolerance(cols));
    for (const quant::QuantSpec& spec : specs) {
      const quant::QuantizedMatrix q = quant::quantize(w.data(), rows, cols, spec);
      quant::cuda::gemv_quantized(q, x.data(), y.data(), options);
      quant::gemv_reference(q, x.data(), ref.data());
      INFO(rows, " x ", cols, " bits ", spec.bits);
      CHECK(quant::gemv_max_relative_error(q, x.data(), y.data(), ref.data()) <= quant::gemv_error_tolerance(cols));
    }
  }
}

TEST_CASE("precision and quant run whole on --backend cuda") {
  for (const char* lesson : {"precision", "quant"}) {
    const auto r = testing::run_cli_captured({"run", lesson, "--backend", "cuda", "--quick", "--json", "-"});
    INFO(lesson, ": ", r.err);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["backend"]["kind"] == "cuda");
    if (std::string(lesson) == "precision") {
      CHECK(j["measured"]["gpu"]["fp16_mismatches"] == 0);
      CHECK(j["measured"]["gpu"]["bf16_mismatches"] == 0);
    } else {
      for (const char* format : {"fp32", "fp16", "int8", "int4"})
        CHECK(j["measured"][std::string(format) + "_wrong"] == false);
    }
  }
}
