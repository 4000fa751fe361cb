// fp16 and bf16 in software, bit for bit: every one of the 65,536 patterns of each decoded as IEEE 754 defines it;
// rounding held against a brute-force search for the nearest representable value (ties to the even mantissa, overflow
// past the largest finite value plus half a spacing); the closed-form limits; exact decimals; GradScaler's rules.
#include <doctest/doctest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/precision/float_format.h"
#include "kernels/precision/loss_scaler.h"
#include "lessons/precision/exact_decimal.h"

using namespace dlsys::precision;

namespace {

// The value of a pattern straight from the standard's formula, with no code shared with the library.
double ieee_value(std::uint32_t bits, int exponent_bits, int mantissa_bits) {
  const std::uint32_t mantissa = bits & ((1u << mantissa_bits) - 1);
  const std::uint32_t exponent = (bits >> mantissa_bits) & ((1u << exponent_bits) - 1);
  const double sign = (bits >> (exponent_bits + mantissa_bits)) & 1u ? -1.0 : 1.0;
  const int bias = (1 << (exponent_bits - 1)) - 1;
  if (exponent == (1u << exponent_bits) - 1)
    return mantissa ? std::numeric_limits<double>::quiet_NaN() : sign * std::numeric_limits<double>::infinity();
  if (exponent == 0) return sign * std::ldexp(double(mantissa), 1 - bias - mantissa_bits);
  return sign * std::ldexp(1.0 + std::ldexp(double(mantissa), -mantissa_bits), int(exponent) - bias);
}

// Every finite non-negative value of a 16-bit format, ascending, with its pattern: the brute-force oracle.
struct Table {
  int exponent_bits, mantissa_bits;
  std::vector<double> values;
  std::vector<std::uint32_t> bits;
  Table(int e, int m) : exponent_bits(e), mantissa_bits(m) {
    const std::uint32_t infinity = ((1u << e) - 1) << m;
    for (std::uint32_t b = 0; b < infinity; ++b) {
      values.push_back(ieee_value(b, e, m));
      bits.push_back(b);
    }
  }
  // Nearest value to x, ties to the even pattern; past max + half a spacing, infinity.
  std::uint32_t nearest(double x) const {
    const std::uint32_t sign = std::signbit(x) ? 1u << (exponent_bits + mantissa_bits) : 0u;
    const double a = std::fabs(x);
    const double spacing_at_max = values.back() - values[values.size() - 2];
    if (a >= values.back() + spacing_at_max / 2) return sign | (((1u << exponent_bits) - 1) << mantissa_bits);
    const auto upper = std::lower_bound(values.begin(), values.end(), a);
    if (upper == values.begin()) return sign | bits.front();
    if (upper == values.end()) return sign | bits.back();
    const std::size_t hi = std::size_t(upper - values.begin()), lo = hi - 1;
    const double below = a - values[lo], above = values[hi] - a;
    if (below < above) return sign | bits[lo];
    if (above < below) return sign | bits[hi];
    return sign | ((bits[lo] & 1u) == 0 ? bits[lo] : bits[hi]);
  }
};

const Table& fp16_table() {
  static const Table table(5, 10);
  return table;
}
const Table& bf16_table() {
  static const Table table(8, 7);
  return table;
}

// Floats that test rounding hardest: every midpoint between neighbours of the table, one float either side of it,
// and a seeded spread across all exponents the format can reach and beyond.
std::vector<float> hard_floats(const Table& table) {
  std::vector<float> out;
  for (std::size_t i = 0; i + 1 < table.values.size(); ++i) {
    const auto mid = float((table.values[i] + table.values[i + 1]) / 2);  // exact: one bit more than the format
    out.push_back(mid);
    out.push_back(std::nextafter(mid, 0.0f));
    out.push_back(std::nextafter(mid, INFINITY));
  }
  std::uint32_t state = 12345;
  for (int i = 0; i < 200000; ++i) {
    state = state * 1664525u + 1013904223u;
    const float f = std::bit_cast<float>(state);
    if (std::isfinite(f)) out.push_back(f);
  }
  return out;
}

}  // namespace

TEST_CASE("every fp16 pattern decodes to the value IEEE 754 defines, and encodes back to itself") {
  const Layout& fp16 = layout_of(Format::Fp16);
  for (std::uint32_t b = 0; b < 65536; ++b) {
    CAPTURE(b);
    const double expected = ieee_value(b, 5, 10);
    const float fast = float_from_fp16_bits(std::uint16_t(b));
    if (std::isnan(expected)) {
      CHECK(std::isnan(fast));
      CHECK(std::isnan(value_of_bits(b, fp16)));
      continue;
    }
    REQUIRE(double(fast) == expected);
    REQUIRE(value_of_bits(b, fp16) == expected);
    REQUIRE(fp16_bits_from_float(fast) == b);
    REQUIRE(round_exact(expected, fp16).bits == b);
  }
}

TEST_CASE("every bf16 pattern decodes to the value IEEE 754's rules give for 1/8/7, and encodes back to itself") {
  const Layout& bf16 = layout_of(Format::Bf16);
  for (std::uint32_t b = 0; b < 65536; ++b) {
    CAPTURE(b);
    const double expected = ieee_value(b, 8, 7);
    const float fast = float_from_bf16_bits(std::uint16_t(b));
    if (std::isnan(expected)) {
      CHECK(std::isnan(fast));
      continue;
    }
    REQUIRE(double(fast) == expected);
    REQUIRE(value_of_bits(b, bf16) == expected);
    REQUIRE(bf16_bits_from_float(fast) == b);
    REQUIRE(round_exact(expected, bf16).bits == b);
  }
}

TEST_CASE("fp16 rounding equals the brute-force nearest value at every midpoint, either side of it, and at random") {
  const Table& table = fp16_table();
  const Layout& fp16 = layout_of(Format::Fp16);
  for (float x : hard_floats(table)) {
    for (float v : {x, -x}) {
      CAPTURE(v);
      const std::uint32_t expected = table.nearest(v);
      REQUIRE(fp16_bits_from_float(v) == expected);
      REQUIRE(round_exact(v, fp16).bits == expected);
    }
  }
}

TEST_CASE("bf16 rounding equals the brute-force nearest value at every midpoint, either side of it, and at random") {
  const Table& table = bf16_table();
  const Layout& bf16 = layout_of(Format::Bf16);
  for (float x : hard_floats(table)) {
    for (float v : {x, -x}) {
      CAPTURE(v);
      const std::uint32_t expected = table.nearest(v);
      REQUIRE(bf16_bits_from_float(v) == expected);
      REQUIRE(round_exact(v, bf16).bits == expected);
    }
  }
}

TEST_CASE("round_exact into the fp32 layout is the compiler's double-to-float conversion") {
  const Layout& fp32 = layout_of(Format::Fp32);
  std::uint64_t state = 99;
  for (int i = 0; i < 200000; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double d = std::bit_cast<double>(state);
    if (!std::isfinite(d)) continue;
    CAPTURE(d);
    const Rounded r = round_exact(d, fp32);
    const float f = static_cast<float>(d);
    REQUIRE(r.value == double(f));
    if (std::isfinite(f)) REQUIRE(r.bits == std::bit_cast<std::uint32_t>(f));
  }
}

TEST_CASE("the limits from the layouts are the published ones, exactly") {
  const Layout &fp16 = layout_of(Format::Fp16), &bf16 = layout_of(Format::Bf16), &fp32 = layout_of(Format::Fp32);
  CHECK(max_finite(fp16) == 65504.0);
  CHECK(min_normal(fp16) == 6.103515625e-05);
  CHECK(min_subnormal(fp16) == 5.9604644775390625e-08);
  CHECK(epsilon(fp16) == 0.0009765625);
  CHECK(max_finite(bf16) == 3.3895313892515355e38);
  CHECK(min_normal(bf16) == std::ldexp(1.0, -126));
  CHECK(min_subnormal(bf16) == std::ldexp(1.0, -133));
  CHECK(epsilon(bf16) == 0.0078125);
  CHECK(max_finite(fp32) == double(FLT_MAX));
  CHECK(min_normal(fp32) == double(FLT_MIN));
  CHECK(min_subnormal(fp32) == double(std::numeric_limits<float>::denorm_min()));
  CHECK(epsilon(fp32) == double(FLT_EPSILON));
}

TEST_CASE("chosen values round as the lesson says, with the bits it shows") {
  const Layout& fp16 = layout_of(Format::Fp16);
  CHECK(fp16_bits_from_float(65519.0f) == 0x7bff);               // 65504
  CHECK(fp16_bits_from_float(65520.0f) == 0x7c00);               // the tie at max + half a spacing goes to inf
  CHECK(fp16_bits_from_float(std::ldexp(1.0f, -25)) == 0x0000);  // half the smallest subnormal: a tie, to 0
  CHECK(fp16_bits_from_float(3e-8f) == 0x0001);
  CHECK(fp16_bits_from_float(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);      // tie: 1 is even
  CHECK(fp16_bits_from_float(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02);  // tie: 1 + 2^-9 is even
  CHECK(fp16_bits_from_float(0.1f) == 0x2e66);
  CHECK(round_exact(0.1, fp16).value == 0.0999755859375);
  CHECK(bf16_bits_from_float(0.1f) == 0x3dcd);
  CHECK(round_to_bf16(100000.0f) == 99840.0f);
  CHECK(round_to_fp16(1.0f + 1e-4f) == 1.0f);  // the update that vanishes
  CHECK(bit_fields(0x7bff, fp16) == "0 11110 1111111111");
  CHECK(bits_hex(0x7bff, fp16) == "0x7bff");
  CHECK(bits_hex(0x3f800000, layout_of(Format::Fp32)) == "0x3f800000");
  const Rounded overflow = round_exact(65520.0, fp16);
  CHECK(overflow.overflow);
  CHECK(overflow.tie);
  CHECK(std::isinf(overflow.value));
  const Rounded flushed = round_exact(2.9e-8, fp16);
  CHECK(flushed.flushed);
  CHECK(flushed.value == 0);
  CHECK(round_exact(1e-5, fp16).subnormal);
}

TEST_CASE("round_in_place counts the values it flushed to zero and the ones it turned into inf") {
  std::vector<float> v{1.0f, 1e-9f, -1e-9f, 0.0f, 70000.0f, 3e-8f};
  const RoundingCounts counts = round_in_place(Format::Fp16, v);
  CHECK(counts.nonzero == 5);
  CHECK(counts.flushed == 2);
  CHECK(counts.overflowed == 1);
  CHECK(v[1] == 0.0f);
  CHECK(std::isinf(v[4]));
  CHECK(v[5] == float(std::ldexp(1.0, -24)));
}

TEST_CASE("exact decimals: every double's expansion ends, and is shown to the last digit or cut with its count") {
  CHECK(format_exact(std::ldexp(1.0, -24)) == "5.9604644775390625e-8");
  CHECK(format_exact(65504.0) == "65504");
  CHECK(format_exact(0.0009765625) == "0.0009765625");
  CHECK(format_exact(-0.5) == "-0.5");
  CHECK(format_exact(0.1, 60) == "0.1000000000000000055511151231257827021181583404541015625");
  CHECK(format_exact(std::ldexp(1.0, -149), 14) == "1.4012984643248...e-45 (105 digits)");
  CHECK(format_exact(1.0 + std::ldexp(1.0, -23), 14) == "1.0000001192092... (24 digits)");
  CHECK(format_exact(double(FLT_MAX), 14) == "3.4028234663852...e38 (38 digits)");
  const DecimalDigits d = exact_decimal(double(FLT_MAX));
  CHECK(d.digits == "34028234663852885981170418348451692544");
  CHECK(d.exponent10 == 38);
}

TEST_CASE("decimal text is rounded as if in one step, also where the nearest double is a tie of the format") {
  const Layout &fp16 = layout_of(Format::Fp16), &fp32 = layout_of(Format::Fp32);
  // 1 + 2^-11 is a tie in fp16 (to 1); a hair above it the text must round up, although its double is the tie.
  CHECK(round_decimal_text("1.00048828125", fp16)->bits == 0x3c00);
  CHECK(round_decimal_text("1.00048828125000000000001", fp16)->bits == 0x3c01);
  CHECK(round_decimal_text("1.00048828124999999999999", fp16)->bits == 0x3c00);
  CHECK(round_exact(1.00048828125000000000001, fp16).bits == 0x3c00);  // what rounding the double alone gives
  // The same trap in fp32: 1 + 2^-24 is halfway between 1 and 1 + 2^-23.
  CHECK(round_decimal_text("1.000000059604644775390625", fp32)->bits == 0x3f800000);
  CHECK(round_decimal_text("1.0000000596046447753906250001", fp32)->bits == 0x3f800001);
  CHECK(round_decimal_text("-65520", fp16)->bits == 0xfc00);
  CHECK(round_decimal_text("1e-400", fp16)->flushed);
  CHECK_FALSE(round_decimal_text("abc", fp16).has_value());
  CHECK_FALSE(round_decimal_text("inf", fp16).has_value());
  CHECK_FALSE(round_decimal_text("1e400", fp16).has_value());
}

TEST_CASE("the loss scaler follows GradScaler: start 2^16, halve and skip on inf, double after growth_interval") {
  LossScaler scaler;  // PyTorch's defaults
  CHECK(scaler.scale() == 65536.0);
  for (int i = 0; i < 1999; ++i) CHECK(scaler.update(false) == ScalerEvent::Clean);
  CHECK(scaler.scale() == 65536.0);
  CHECK(scaler.update(false) == ScalerEvent::Grew);
  CHECK(scaler.scale() == 131072.0);
  for (int i = 0; i < 1999; ++i) scaler.update(false);
  CHECK(scaler.update(true) == ScalerEvent::Skipped);  // one inf resets the count of clean steps
  CHECK(scaler.scale() == 65536.0);
  CHECK(scaler.clean_steps_in_a_row() == 0);
  for (int i = 0; i < 1999; ++i) scaler.update(false);
  CHECK(scaler.scale() == 65536.0);
  scaler.update(false);
  CHECK(scaler.scale() == 131072.0);
  LossScaler near_the_top({.init_scale = DBL_MAX, .growth_interval = 1});
  CHECK(near_the_top.update(false) == ScalerEvent::Clean);  // a scale that would overflow is not taken
  CHECK(near_the_top.scale() == DBL_MAX);
}
