#pragma once
// ceil(a / b) for a >= 0 and b > 0, for tile counts and byte sizes alike. Written without a + b - 1, which wraps for
// a near the top of the range (a byte count from a user's model config can be that large).
#include <cstdint>

#include "kernels/common/host_device.h"

namespace dlsys {

DLSYS_HOST_DEVICE constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return a / b + (a % b != 0 ? 1 : 0);
}

}  // namespace dlsys
