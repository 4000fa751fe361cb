// The quantizers against their formulas, the NF4 table, scale overheads against QLoRA's figures, 2:4 pruning, and
// every GEMV kernel (fp32, fp16, int8, int4, nf4; each granularity, awkward sizes and blocks) against the double
// reference of its own dequantized weights.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/common/seeded_fill.h"
#include "kernels/precision/float_format.h"
#include "kernels/quant/gemv.h"
#include "kernels/quant/quantize.h"

using namespace dlsys;
using namespace dlsys::quant;

namespace {

std::vector<float> seeded(std::int64_t count, std::uint32_t seed, float scale = 1.0f) {
  std::vector<float> v(static_cast<std::size_t>(count));
  fill_seeded_uniform(v, seed, scale);
  return v;
}

}  // namespace

TEST_CASE("absmax int8: s = max|w| / 127, codes round to nearest, and w^ = s q") {
  const std::vector<float> w{-1.0f, 0.5f, 0.25f, 0.0f, 0.004f};
  const QuantizedMatrix q = quantize(w.data(), 1, 5, {Scheme::Absmax, Granularity::Tensor, 8, 64, false});
  CHECK(q.scales[0] == 1.0f / 127);
  CHECK(q.zeros[0] == 128.0f);
  CHECK(q.code(0, 0) == 128 - 127);
  CHECK(q.code(0, 2) == 128 + 32);  // 0.25 x 127 = 31.75
  CHECK(q.code(0, 3) == 128);
  CHECK(q.code(0, 4) == 129);  // 0.004 x 127 = 0.508
  CHECK(q.dequantized(0, 0) == -1.0f);
  CHECK(q.dequantized(0, 3) == 0.0f);
}

TEST_CASE("affine: s = (max - min) / (2^b - 1), z = round(-min / s), and 0 stays exact") {
  const std::vector<float> w{-0.2f, 0.0f, 0.6f, 1.0f};
  const QuantizedMatrix q = quantize(w.data(), 1, 4, {Scheme::Affine, Granularity::Tensor, 4, 64, false});
  const float s = 1.2f / 15;
  CHECK(q.scales[0] == doctest::Approx(s));
  CHECK((q.zeros[0] == 2.0f || q.zeros[0] == 3.0f));  // 0.2 / s = 2.5, and float rounding decides the side
  CHECK(q.dequantized(0, 1) == 0.0f);
  for (int j = 0; j < 4; ++j) CHECK(std::fabs(q.dequantized(0, j) - w[std::size_t(j)]) <= s / 2 + 1e-7f);
}

TEST_CASE("every scheme keeps each weight within half a step of its scale, at every width from 2 to 8 bits") {
  const std::vector<float> w = seeded(13 * 70, 5, 0.3f);
  for (Granularity g : {Granularity::Tensor, Granularity::Channel, Granularity::Block})
    for (Scheme scheme : {Scheme::Absmax, Scheme::Affine})
      for (int bits = 2; bits <= 8; ++bits) {
        CAPTURE(bits);
        CAPTURE(int(g));
        const QuantizedMatrix q = quantize(w.data(), 13, 70, {scheme, g, bits, 16, false});
        for (std::int64_t i = 0; i < 13; ++i)
          for (std::int64_t j = 0; j < 70; ++j) {
            const float step = q.scales[std::size_t(i * q.segments_per_row + j / q.segment)];
            REQUIRE(std::fabs(q.dequantized(i, j) - w[std::size_t(i * 70 + j)]) <= step / 2 * (1 + 1e-5f));
            REQUIRE(q.code(i, j) < (1u << bits));
          }
      }
}

TEST_CASE("uniform rounding noise: the measured mean square error is D^2 / 12 for weights spread evenly") {
  const std::vector<float> w = seeded(512 * 512, 9);
  const QuantizedMatrix q = quantize(w.data(), 512, 512, {Scheme::Absmax, Granularity::Channel, 6, 64, false});
  const QuantError e = quantization_error(w.data(), q);
  REQUIRE(e.uniform_noise_mse.has_value());
  CHECK(e.mse == doctest::Approx(*e.uniform_noise_mse).epsilon(0.02));
}

TEST_CASE("NF4: bitsandbytes' 16 levels from -1 to 1 with an exact 0, and the nearest level is taken") {
  CHECK(kNf4Levels.front() == -1.0f);
  CHECK(kNf4Levels.back() == 1.0f);
  CHECK(kNf4Levels[7] == 0.0f);
  CHECK(std::is_sorted(kNf4Levels.begin(), kNf4Levels.end()));
  std::vector<float> w;
  for (float level : kNf4Levels) w.push_back(0.5f * level);  // each an exact level of a block whose absmax is 0.5
  const QuantizedMatrix q = quantize(w.data(), 1, 16, {Scheme::Nf4, Granularity::Block, 4, 64, false});
  for (std::int64_t j = 0; j < 16; ++j) {
    CHECK(q.code(0, j) == std::uint32_t(j));
    CHECK(q.dequantized(0, j) == w[std::size_t(j)]);
  }
}

TEST_CASE(
    "scale overhead per weight: 32/64 = 0.5 bits for NF4 blocks, 8/64 + 32/(64 x 256) after double quantization") {
  const QuantSpec nf4{Scheme::Nf4, Granularity::Block, 4, 64, false};
  CHECK(scale_overhead_bits_per_param(nf4, 4096, 4096) == 0.5);
  QuantSpec dq = nf4;
  dq.double_quant = true;
  // 262,144 scales of 8 bits, 1,024 second-level scales and one mean of 32 bits, over 4096^2 weights.
  CHECK(scale_overhead_bits_per_param(dq, 4096, 4096) == (262144.0 * 8 + 1024 * 32 + 32) / (4096.0 * 4096));
  CHECK(scale_overhead_bits_per_param(dq, 4096, 4096) == doctest::Approx(0.127).epsilon(0.001));
  CHECK(scale_overhead_bits_per_param({Scheme::Absmax, Granularity::Channel, 8, 64, false}, 4096, 4096) == 32.0 / 4096);
  CHECK(scale_overhead_bits_per_param({Scheme::Affine, Granularity::Channel, 8, 64, false}, 4096, 4096) == 40.0 / 4096);
  CHECK(scale_overhead_bits_per_param({Scheme::Absmax, Granularity::Tensor, 8, 64, false}, 4, 4) == 2.0);
}

TEST_CASE("double quantization restores each block scale to within half a second-level step") {
  const std::vector<float> w = seeded(64 * 640, 21, 0.05f);
  const QuantizedMatrix plain = quantize(w.data(), 64, 640, {Scheme::Nf4, Granularity::Block, 4, 64, false});
  const QuantizedMatrix dq = quantize(w.data(), 64, 640, {Scheme::Nf4, Granularity::Block, 4, 64, true});
  REQUIRE(dq.scale_codes.size() == 640);
  REQUIRE(dq.second_scales.size() == 3);  // 640 scales in blocks of 256
  for (std::size_t g = 0; g < dq.scales.size(); ++g) {
    const float step = dq.second_scales[g / kDoubleQuantBlock];
    CHECK(std::fabs(dq.scales[g] - plain.scales[g]) <= step / 2 * (1 + 1e-5f));
  }
  CHECK(dq.codes == plain.codes);  // the codes come from the full-precision scales, as in QLoRA
}

TEST_CASE("2:4 pruning keeps the 2 largest magnitudes of every 4, the earlier on a tie") {
  std::vector<float> w{1.0f, -3.0f, 2.0f, 0.5f, 1.0f, 1.0f, 1.0f, 1.0f, 0.0f, 0.0f, -0.1f, 0.0f};
  const std::vector<std::uint8_t> kept = prune_2_of_4(w.data(), 1, 12);
  CHECK(kept == std::vector<std::uint8_t>{0, 1, 1, 0, 1, 1, 0, 0, 1, 0, 1, 0});
  CHECK(w[0] == 0.0f);
  CHECK(w[1] == -3.0f);
  CHECK(w[6] == 0.0f);
  std::vector<float> many = seeded(16 * 64, 3);
  const std::vector<std::uint8_t> mask = prune_2_of_4(many.data(), 16, 64);
  CHECK(std::count(mask.begin(), mask.end(), 1) == 16 * 32);
}

TEST_CASE("fp32 and fp16 GEMV match the double reference at awkward sizes") {
  for (std::int64_t cols : {1, 7, 15, 16, 17, 33, 131}) {
    CAPTURE(cols);
    const std::int64_t rows = 37;
    const std::vector<float> w = seeded(rows * cols, 4), x = seeded(cols, 8);
    std::vector<float> y(static_cast<std::size_t>(rows)), rounded(w.size());
    std::vector<std::uint16_t> h(w.size());
    for (std::size_t i = 0; i < w.size(); ++i) {
      h[i] = precision::fp16_bits_from_float(w[i]);
      rounded[i] = precision::float_from_fp16_bits(h[i]);
    }
    std::vector<double> ref(static_cast<std::size_t>(rows));
    gemv_fp32(w.data(), rows, cols, x.data(), y.data(), 2);
    gemv_reference(w.data(), rows, cols, x.data(), ref.data());
    CHECK(gemv_max_relative_error(w.data(), rows, cols, x.data(), y.data(), ref.data()) <= gemv_error_tolerance(cols));
    gemv_fp16(h.data(), rows, cols, x.data(), y.data(), 2);
    gemv_reference(rounded.data(), rows, cols, x.data(), ref.data());
    CHECK(gemv_max_relative_error(rounded.data(), rows, cols, x.data(), y.data(), ref.data()) <=
          gemv_error_tolerance(cols));
  }
}

TEST_CASE("quantized GEMV matches the double reference of its dequantized weights: every scheme, width, granularity") {
  const std::int64_t rows = 19;
  for (std::int64_t cols : {5, 16, 31, 64, 100, 259})
    for (Scheme scheme : {Scheme::Absmax, Scheme::Affine, Scheme::Nf4})
      for (Granularity g : {Granularity::Tensor, Granularity::Channel, Granularity::Block})
        for (int block : {1, 3, 16, 64})
          for (int bits : {2, 3, 4, 5, 8}) {
            if (scheme == Scheme::Nf4 && bits != 4) continue;
            if (g != Granularity::Block && block != 64) continue;
            CAPTURE(cols);
            CAPTURE(int(scheme));
            CAPTURE(int(g));
            CAPTURE(block);
            CAPTURE(bits);
            const std::vector<float> w = seeded(rows * cols, 6, 0.1f), x = seeded(cols, 7);
            const QuantizedMatrix q = quantize(w.data(), rows, cols, {scheme, g, bits, block, false});
            std::vector<float> y(static_cast<std::size_t>(rows));
            std::vector<double> ref(static_cast<std::size_t>(rows));
            gemv_quantized(q, x.data(), y.data(), 2);
            const std::vector<float> x_used = gemv_x_as_used(q, x.data());
            gemv_reference(q, x_used.data(), ref.data());
            REQUIRE(gemv_max_relative_error(q, x_used.data(), y.data(), ref.data()) <= gemv_error_tolerance(cols));
          }
}

TEST_CASE("a wrong GEMV is caught: one code changed makes the check fail") {
  const std::vector<float> w = seeded(8 * 64, 2), x = seeded(64, 3);
  QuantizedMatrix q = quantize(w.data(), 8, 64, {Scheme::Absmax, Granularity::Block, 4, 16, false});
  std::vector<float> y(8);
  std::vector<double> ref(8);
  const std::vector<float> x_used = gemv_x_as_used(q, x.data());
  gemv_reference(q, x_used.data(), ref.data());
  q.codes[5] ^= 0x0F;  // a kernel reading one wrong nibble
  gemv_quantized(q, x.data(), y.data(), 1);
  CHECK(gemv_max_relative_error(q, x_used.data(), y.data(), ref.data()) > gemv_error_tolerance(64));
}

TEST_CASE("integer codes multiply x as int8 with one scale, max |x| / 127; NF4 codes multiply x as it is") {
  const std::vector<float> w = seeded(4 * 64, 2), x = {0.5f, -1.27f, 0.0f, 0.0049f, 0.0051f, 1.0f, -0.634f};
  const QuantizedMatrix int4 = quantize(w.data(), 4, 7, {Scheme::Absmax, Granularity::Block, 4, 64, false});
  const float scale = 1.27f / 127;
  const std::vector<float> used = gemv_x_as_used(int4, x.data());
  const std::vector<float> expected = {50 * scale, -127 * scale, 0, 0, 1 * scale, 100 * scale, -63 * scale};
  REQUIRE(used.size() == expected.size());
  for (std::size_t j = 0; j < used.size(); ++j) CHECK(used[j] == expected[j]);
  const QuantizedMatrix nf4 = quantize(w.data(), 4, 7, {Scheme::Nf4, Granularity::Block, 4, 64, false});
  CHECK(gemv_x_as_used(nf4, x.data()) == x);
}
