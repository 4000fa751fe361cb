// The formats' layouts, their closed-form limits, and rounding from the definition (the reference the fast
// conversions in float_format.h are tested against).
#include "kernels/precision/float_format.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace dlsys::precision {

namespace {

constexpr Layout kLayouts[] = {
    {Format::Fp32, "fp32", 8, 23},
    {Format::Fp16, "fp16", 5, 10},
    {Format::Bf16, "bf16", 8, 7},
};

std::uint32_t all_ones(int bits) { return bits >= 32 ? 0xffffffffu : (1u << bits) - 1u; }

}  // namespace

const Layout& layout_of(Format format) {
  for (const Layout& layout : kLayouts)
    if (layout.format == format) return layout;
  return kLayouts[0];
}

std::optional<Format> find_format(std::string_view name) {
  for (const Layout& layout : kLayouts)
    if (name == layout.name) return layout.format;
  return std::nullopt;
}

double max_finite(const Layout& l) { return (2.0 - std::ldexp(1.0, -l.mantissa_bits)) * std::ldexp(1.0, l.bias()); }
double min_normal(const Layout& l) { return std::ldexp(1.0, 1 - l.bias()); }
double min_subnormal(const Layout& l) { return std::ldexp(1.0, 1 - l.bias() - l.mantissa_bits); }
double epsilon(const Layout& l) { return std::ldexp(1.0, -l.mantissa_bits); }

Rounded round_exact(double value, const Layout& l) {
  const int m = l.mantissa_bits, e = l.exponent_bits, bias = l.bias();
  const std::uint32_t sign_bit = std::signbit(value) ? 1u << (m + e) : 0u;
  const std::uint32_t exponent_all_ones = all_ones(e) << m;
  Rounded out;
  if (std::isnan(value)) {
    out.value = value;
    out.bits = sign_bit | exponent_all_ones | (1u << (m - 1));  // the quiet-NaN bit
    return out;
  }
  const double magnitude = std::fabs(value);
  const double sign = std::signbit(value) ? -1.0 : 1.0;
  auto infinite = [&](bool overflowed) {
    out.value = sign * std::numeric_limits<double>::infinity();
    out.bits = sign_bit | exponent_all_ones;
    out.overflow = overflowed;
    return out;
  };
  if (std::isinf(magnitude)) return infinite(false);
  if (magnitude == 0) {
    out.value = value;
    out.bits = sign_bit;
    return out;
  }
  // The binade 2^E <= |x| < 2^(E+1), or the subnormal range, whose quantum stays at the smallest exponent's.
  const int min_exponent = 1 - bias;
  int frexp_exponent = 0;
  std::frexp(magnitude, &frexp_exponent);  // |x| = f 2^frexp_exponent with f in [0.5, 1)
  int exponent = std::max(frexp_exponent - 1, min_exponent);
  const double quantum = std::ldexp(1.0, exponent - m);
  const double exact_units = magnitude / quantum;  // exact: a division by a power of two
  out.tie = exact_units - std::floor(exact_units) == 0.5;
  double units = std::nearbyint(exact_units);  // ties to even (the default rounding mode)
  if (units == std::ldexp(1.0, m + 1)) {       // rounded up into the next binade
    units = std::ldexp(1.0, m);
    ++exponent;
  }
  if (exponent > bias) return infinite(true);  // past max_finite by at least half a quantum (a tie goes to even: inf)
  out.value = sign * units * std::ldexp(1.0, exponent - m);
  out.flushed = units == 0;
  const auto integer_units = static_cast<std::uint32_t>(units);
  if (integer_units < (1u << m)) {  // a subnormal (or zero): exponent field 0, no implicit 1
    out.bits = sign_bit | integer_units;
    out.subnormal = integer_units != 0;
  } else {
    out.bits = sign_bit | (std::uint32_t(exponent + bias) << m) | (integer_units - (1u << m));
  }
  return out;
}

double value_of_bits(std::uint32_t bits, const Layout& l) {
  const int m = l.mantissa_bits, e = l.exponent_bits;
  const double sign = (bits >> (m + e)) & 1u ? -1.0 : 1.0;
  const std::uint32_t exponent_field = (bits >> m) & all_ones(e), mantissa = bits & all_ones(m);
  if (exponent_field == all_ones(e))
    return mantissa == 0 ? sign * std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  if (exponent_field == 0) return sign * double(mantissa) * min_subnormal(l);
  return sign * (std::ldexp(1.0, m) + mantissa) * std::ldexp(1.0, int(exponent_field) - l.bias() - m);
}

std::string bit_fields(std::uint32_t bits, const Layout& l) {
  std::string out;
  for (int i = l.total_bits() - 1; i >= 0; --i) {
    out += (bits >> i) & 1u ? '1' : '0';
    if (i == l.total_bits() - 1 || i == l.mantissa_bits) out += ' ';
  }
  return out;
}

std::string bits_hex(std::uint32_t bits, const Layout& l) { return fmt::format("0x{:0{}x}", bits, l.total_bits() / 4); }

RoundingCounts round_in_place(Format format, std::span<float> values) {
  RoundingCounts counts;
  for (float& v : values) counts.nonzero += v != 0.0f;
  if (format == Format::Fp32) return counts;
  for (float& v : values) {
    const float r = round_to(format, v);
    counts.flushed += (r == 0.0f) & (v != 0.0f);
    counts.overflowed += std::isinf(r) & !std::isinf(v);
    v = r;
  }
  return counts;
}

}  // namespace dlsys::precision
