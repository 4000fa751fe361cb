#pragma once
// Numbers shown to the last digit. Every finite double is m x 2^e with integer m, so its decimal expansion ends: 2^-24
// is exactly 5.9604644775390625e-8. And decimal text typed by a user is rounded into a format as if in one step: text
// goes to the nearest double first, which can land exactly on a halfway point of the narrower format although the text
// did not (1.00048828125000000001 becomes 1 + 2^-11 in double, a tie in fp16); the text then decides the direction.
#include <optional>
#include <string>
#include <string_view>

#include "kernels/precision/float_format.h"

namespace dlsys::precision {

// value = (negative ? -1 : 1) x d1.d2d3... x 10^exponent10, digits without trailing zeros ("0" for zero).
struct DecimalDigits {
  bool negative = false;
  std::string digits = "0";
  int exponent10 = 0;
};

DecimalDigits exact_decimal(double value);
// The text's own digits ("-12.5e-3"), whatever its size; nullopt when it is not digits, a point and an exponent.
std::optional<DecimalDigits> decimal_of_text(std::string_view text);
// -1, 0 or 1 as |a| is below, equal to or above |b|.
int compare_magnitudes(const DecimalDigits& a, const DecimalDigits& b);

// The exact value, positional when short ("65504", "0.0009765625"), otherwise scientific ("5.9604644775390625e-8");
// past `max_digits` significant digits the rest is cut and the count of digits said ("1.4012984643...e-45, 105
// digits").
std::string format_exact(double value, int max_digits = 24);

// Decimal text rounded into `layout`, to nearest with ties to even, as if in one step. nullopt when the text is not a
// number by the lab's grammar or lies beyond the double range.
std::optional<Rounded> round_decimal_text(std::string_view text, const Layout& layout);

}  // namespace dlsys::precision
