#pragma once
// Floating-point formats narrower than fp32, in software and bit for bit: IEEE 754 binary16 (fp16: 1 sign, 5 exponent,
// 10 mantissa bits) and bfloat16 (bf16: 1/8/7, the top half of an fp32), each rounded to nearest with ties to even,
// with subnormals, infinities and NaN as IEEE 754 defines them.
//
// Every fp16 and bf16 value is exact in fp32, so a tensor "in fp16" is an fp32 array whose every element has been
// rounded to fp16. Products of two such values are exact in fp32 too (11 + 11 significant bits < 24), so an fp32 GEMM
// over rounded operands, rounded once at the end, is what a tensor core does with fp32 accumulation.
//
// Two paths: the fast inline conversions below (integer operations on the fp32 bits, used in the training loop), and
// round_exact() in float_format.cpp, which rounds a double to any (exponent, mantissa) layout straight from the
// definition; the tests hold the one against the other and both against every fp16 value.
#include <bit>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "kernels/precision/format.h"

namespace dlsys::precision {

struct Layout {
  Format format = Format::Fp32;
  const char* name = "";
  int exponent_bits = 0;
  int mantissa_bits = 0;  // stored fraction bits; the significand has one more (the implicit leading 1)

  int total_bits() const { return 1 + exponent_bits + mantissa_bits; }
  int bias() const { return (1 << (exponent_bits - 1)) - 1; }
};

const Layout& layout_of(Format format);
// "fp32", "fp16", "bf16"; nullopt for any other name.
std::optional<Format> find_format(std::string_view name);
inline constexpr const char* kFormatNames[] = {"fp32", "fp16", "bf16"};

// Closed forms from the layout, exact in double.
double max_finite(const Layout& layout);     // (2 - 2^-m) 2^bias: all-ones mantissa, largest exponent below inf
double min_normal(const Layout& layout);     // 2^(1 - bias)
double min_subnormal(const Layout& layout);  // 2^(1 - bias - m): the last mantissa bit at the smallest exponent
double epsilon(const Layout& layout);        // 2^-m: the gap between 1 and the next value up

// One value rounded into a layout: its bits (right-aligned, total_bits() wide) and the value they stand for.
struct Rounded {
  double value = 0;  // +-inf when it overflowed
  std::uint32_t bits = 0;
  bool overflow = false;   // finite input, infinite result
  bool flushed = false;    // non-zero input, zero result
  bool subnormal = false;  // non-zero result below min_normal
  bool tie = false;        // the input lay exactly halfway between two neighbours (ties go to the even one)
};
// Round to nearest, ties to even, from the definition: the quantum at the input's binade (or the subnormal quantum),
// the input divided by it rounded to the nearest even integer, overflow past max_finite + half a quantum. NaN stays
// NaN.
Rounded round_exact(double value, const Layout& layout);
// The value a bit pattern stands for (exact).
double value_of_bits(std::uint32_t bits, const Layout& layout);
// "0 01111 0000000000": sign, exponent and mantissa fields.
std::string bit_fields(std::uint32_t bits, const Layout& layout);
// "0x3c00": as many hex digits as the layout has bytes, times two.
std::string bits_hex(std::uint32_t bits, const Layout& layout);

// fp32 -> fp16 bits, round to nearest even.
inline std::uint16_t fp16_bits_from_float(float value) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t magnitude = x & 0x7fffffffu;
  if (magnitude >= 0x7f800000u)  // inf stays inf; a NaN stays a (quiet) NaN with its top payload bits
    return static_cast<std::uint16_t>(sign | 0x7c00u |
                                      (magnitude > 0x7f800000u ? 0x200u | ((magnitude >> 13) & 0x3ffu) : 0u));
  if (magnitude >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // >= 65520: past max + half ulp
  if (magnitude < 0x38800000u) {  // below 2^-14: an fp16 subnormal (or zero) counted in units of 2^-24
    const std::uint32_t exponent = magnitude >> 23;
    if (exponent < 102) return static_cast<std::uint16_t>(sign);  // below 2^-25: half the smallest subnormal
    const std::uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 126 - exponent;  // value / 2^-24 = significand / 2^shift
    std::uint32_t units = significand >> shift;
    const std::uint32_t rest = significand & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rest > half || (rest == half && (units & 1u))) ++units;  // may carry into 0x400, the smallest normal
    return static_cast<std::uint16_t>(sign | units);
  }
  // A normal fp16: rebias the exponent (127 - 15 = 112) and keep the top 10 mantissa bits, rounded.
  std::uint32_t bits = (magnitude - 0x38000000u) >> 13;
  const std::uint32_t rest = magnitude & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (bits & 1u))) ++bits;  // a carry moves into the exponent, as it should
  return static_cast<std::uint16_t>(sign | bits);
}

inline float float_from_fp16_bits(std::uint16_t bits) {
  const std::uint32_t sign = std::uint32_t(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1fu, mantissa = bits & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {  // zero or subnormal: mantissa x 2^-24, exact in fp32
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return std::bit_cast<float>(sign | std::bit_cast<std::uint32_t>(magnitude));
  }
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

// fp32 -> bf16 bits, round to nearest even: add just under half of the dropped part (one more when the kept part is
// odd) and truncate. Overflow to inf and bf16's subnormals come out of the same carry.
inline std::uint16_t bf16_bits_from_float(float value) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  const std::uint32_t odd = (x >> 16) & 1u;
  return static_cast<std::uint16_t>((x + 0x7fffu + odd) >> 16);
}

inline float float_from_bf16_bits(std::uint16_t bits) { return std::bit_cast<float>(std::uint32_t(bits) << 16); }

inline float round_to_fp16(float value) { return float_from_fp16_bits(fp16_bits_from_float(value)); }
inline float round_to_bf16(float value) { return float_from_bf16_bits(bf16_bits_from_float(value)); }

inline float round_to(Format format, float value) {
  switch (format) {
    case Format::Fp16:
      return round_to_fp16(value);
    case Format::Bf16:
      return round_to_bf16(value);
    case Format::Fp32:
      break;
  }
  return value;
}

// Rounds every element in place. Returns how many elements were non-zero, how many of those became zero (below half
// the smallest subnormal) and how many finite elements became infinite.
struct RoundingCounts {
  std::int64_t nonzero = 0;  // non-zero elements before rounding
  std::int64_t flushed = 0;
  std::int64_t overflowed = 0;
};
RoundingCounts round_in_place(Format format, std::span<float> values);

}  // namespace dlsys::precision
