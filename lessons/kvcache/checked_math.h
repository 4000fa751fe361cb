#pragma once
// 64-bit sizes that refuse to wrap: a product or sum that overflows is bad input (exit 2), named by what it sizes.
#include <fmt/format.h>

#include <cstdint>
#include <string>

#include "engine/errors.h"
#include "kernels/common/ceil_div.h"

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

using ::dlsys::ceil_div;

}  // namespace dlsys::kvcache
