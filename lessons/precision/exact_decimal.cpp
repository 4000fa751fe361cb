#include "lessons/precision/exact_decimal.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "engine/params.h"

namespace dlsys::precision {

namespace {

// A non-negative integer in base 10^9, least significant limb first: enough for m x 5^1074.
class BigDecimalInteger {
 public:
  explicit BigDecimalInteger(std::uint64_t value) {
    do {
      limbs_.push_back(std::uint32_t(value % kBase));
      value /= kBase;
    } while (value != 0);
  }
  void multiply(std::uint32_t factor) {
    std::uint64_t carry = 0;
    for (std::uint32_t& limb : limbs_) {
      const std::uint64_t product = std::uint64_t(limb) * factor + carry;
      limb = std::uint32_t(product % kBase);
      carry = product / kBase;
    }
    if (carry != 0) limbs_.push_back(std::uint32_t(carry));
  }
  std::string digits() const {
    std::string out = std::to_string(limbs_.back());
    for (std::size_t i = limbs_.size() - 1; i-- > 0;) out += fmt::format("{:09d}", limbs_[i]);
    return out;
  }

 private:
  static constexpr std::uint64_t kBase = 1'000'000'000;
  std::vector<std::uint32_t> limbs_;
};

// Strips leading and trailing zeros from `digits` whose first digit stands for 10^exponent10.
DecimalDigits normalised(bool negative, std::string digits, int exponent10) {
  const std::size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) return {negative, "0", 0};
  exponent10 -= int(first);
  digits.erase(0, first);
  digits.erase(digits.find_last_not_of('0') + 1);
  return {negative, digits, exponent10};
}

// "5.96e-8": the digits shown, then what was cut.
std::string format_scientific(const std::string& sign, const std::string& shown, int exponent10,
                              const std::string& more) {
  const std::string point = shown.size() > 1 ? "." + shown.substr(1) : "";
  if (more.empty()) return fmt::format("{}{}{}e{}", sign, shown.substr(0, 1), point, exponent10);
  return fmt::format("{}{}{}...e{}{}", sign, shown.substr(0, 1), point, exponent10, more.substr(3));
}

}  // namespace

DecimalDigits exact_decimal(double value) {
  if (value == 0 || !std::isfinite(value)) return {std::signbit(value), "0", 0};
  int exponent = 0;
  const double fraction = std::frexp(std::fabs(value), &exponent);  // |value| = fraction 2^exponent
  auto mantissa = static_cast<std::uint64_t>(std::ldexp(fraction, 53));
  int power_of_two = exponent - 53;
  while ((mantissa & 1u) == 0) {
    mantissa >>= 1;
    ++power_of_two;
  }
  BigDecimalInteger n(mantissa);
  // m 2^e = m 2^e for e >= 0; for e < 0 it is m 5^-e / 10^-e.
  for (int i = 0; i < std::abs(power_of_two); ++i) n.multiply(power_of_two >= 0 ? 2 : 5);
  const std::string digits = n.digits();
  const int exponent10 = int(digits.size()) - 1 + (power_of_two < 0 ? power_of_two : 0);
  return normalised(value < 0, digits, exponent10);
}

std::optional<DecimalDigits> decimal_of_text(std::string_view text) {
  const bool negative = !text.empty() && text[0] == '-';
  std::size_t i = negative ? 1 : 0;
  std::string digits;
  int point = -1;  // digits before the decimal point
  for (; i < text.size() && text[i] != 'e' && text[i] != 'E'; ++i) {
    if (text[i] == '.') {
      point = int(digits.size());
      continue;
    }
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    digits += text[i];
  }
  if (digits.empty()) return std::nullopt;
  if (point < 0) point = int(digits.size());
  long long exponent = 0;
  if (i < text.size()) {
    const std::string_view exponent_text = text.substr(i + 1);
    const auto parsed = parse_integer_text(exponent_text);
    if (!parsed || exponent_text.empty() || exponent_text[0] == '+') return std::nullopt;
    exponent = std::clamp<long long>(*parsed, -100000, 100000);
  }
  return normalised(negative, digits, int(point - 1 + exponent));
}

int compare_magnitudes(const DecimalDigits& a, const DecimalDigits& b) {
  const bool a_zero = a.digits == "0", b_zero = b.digits == "0";
  if (a_zero || b_zero) return a_zero && b_zero ? 0 : (a_zero ? -1 : 1);
  if (a.exponent10 != b.exponent10) return a.exponent10 < b.exponent10 ? -1 : 1;
  const int order = a.digits.compare(b.digits);  // same leading power of ten: digit strings compare as numbers
  return order < 0 ? -1 : (order > 0 ? 1 : 0);
}

std::string format_exact(double value, int max_digits) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  const DecimalDigits d = exact_decimal(value);
  const std::string sign = d.negative ? "-" : "";
  if (d.digits == "0") return sign + "0";
  const int count = int(d.digits.size());
  const bool cut = count > max_digits;
  const std::string shown = cut ? d.digits.substr(0, std::size_t(max_digits)) : d.digits;
  const int shown_count = int(shown.size());
  const std::string more = cut ? fmt::format("... ({} digits)", count) : "";
  if (d.exponent10 >= -4 && d.exponent10 < 16 && (cut || d.exponent10 < max_digits)) {  // positional
    if (d.exponent10 >= 0) {
      if (cut && shown_count <= d.exponent10) return format_scientific(sign, shown, d.exponent10, more);
      std::string whole = shown.substr(0, std::size_t(std::min(shown_count, d.exponent10 + 1)));
      whole += std::string(std::size_t(std::max(0, d.exponent10 + 1 - shown_count)), '0');
      const std::string rest = shown_count > d.exponent10 + 1 ? shown.substr(std::size_t(d.exponent10 + 1)) : "";
      return sign + whole + (rest.empty() ? "" : "." + rest) + more;
    }
    return sign + "0." + std::string(std::size_t(-d.exponent10 - 1), '0') + shown + more;
  }
  return format_scientific(sign, shown, d.exponent10, more);
}

std::optional<Rounded> round_decimal_text(std::string_view text, const Layout& layout) {
  const std::optional<double> nearest_double = parse_real_text(text);
  const std::optional<DecimalDigits> typed = decimal_of_text(text);
  if (!nearest_double || !typed) return std::nullopt;
  const double d = *nearest_double;
  Rounded r = round_exact(d, layout);
  if (d == 0 && typed->digits != "0") {  // below the smallest double: zero in any format, but not zero typed
    r.flushed = true;
    return r;
  }
  if (!r.tie) return r;
  // The double sits exactly halfway; unless the text is that very value, the text lies to one side of it.
  const int side = compare_magnitudes(*typed, exact_decimal(d));
  if (side == 0) return r;
  const double infinity = std::numeric_limits<double>::infinity();
  const double nudged = std::nextafter(d, side > 0 ? std::copysign(infinity, d) : 0.0);
  Rounded decided = round_exact(nudged, layout);
  decided.tie = false;
  return decided;
}

}  // namespace dlsys::precision
