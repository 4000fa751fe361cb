#pragma once
// 64-bit sizes that refuse to wrap: a product or sum that overflows is bad input (exit 2), named by what it sizes.
#include <fmt/format.h>

#include <cstdint>
#include <string>

#include "engine/errors.h"

namespace dlsys::kvcache {

inline std::int64_t multiply(std::int64_t a, std::int64_t b, const std::string& what) {
  std::int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product))
    throw BadInput(fmt::format("{} overflows 64 bits ({} x {}); use smaller sizes", what, a, b));
  return product;
}

inline std::int64_t add(std::int64_t a, std::int64_t b, const std::string& what) {
  std::int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum))
    throw BadInput(fmt::format("{} overflows 64 bits ({} + {}); use smaller sizes", what, a, b));
  return sum;
}

// ceil(a / b) for a >= 0, b > 0, without the a + b - 1 that could overflow.
inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

}  // namespace dlsys::kvcache
