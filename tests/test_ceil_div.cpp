// The one ceil_div every tile count and byte size uses: exact at every remainder, and no wrap near the top of the
// 64-bit range, where the usual (a + b - 1) / b overflows.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>

#include "kernels/common/ceil_div.h"
#include "kernels/matmul/tile_math.h"

TEST_CASE("ceil_div rounds up exactly and does not overflow") {
  using dlsys::ceil_div;
  CHECK(ceil_div(0, 7) == 0);
  CHECK(ceil_div(1, 7) == 1);
  CHECK(ceil_div(7, 7) == 1);
  CHECK(ceil_div(8, 7) == 2);
  CHECK(ceil_div(64, 64) == 1);
  CHECK(ceil_div(65, 64) == 2);
  constexpr std::int64_t top = std::numeric_limits<std::int64_t>::max();
  CHECK(ceil_div(top, 8) == top / 8 + 1);
  CHECK(ceil_div(top, 1) == top);
  CHECK(ceil_div(top - 1, top) == 1);
  static_assert(ceil_div(10, 3) == 4, "usable in constant expressions, as tile math needs");
  // The kernels' own names reach the same function.
  CHECK(dlsys::matmul::ceil_div(top, 2) == top / 2 + 1);
}
