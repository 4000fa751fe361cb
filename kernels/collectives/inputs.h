#pragma once
// The inputs every collective run uses, on the CPU and on the GPU alike: small integers (-8..8) stored as floats,
// so every partial sum is exact in fp32 whatever order the ranks add in, and a result is checked exactly.
#include <cstdint>

#include "kernels/collectives/ring_schedule.h"  // DLSYS_HOST_DEVICE

namespace dlsys::collectives {

// Rank `rank`'s input element `index`: a hash of both, so chunks and ranks differ.
DLSYS_HOST_DEVICE inline float input_value(int rank, std::int64_t index) {
  std::uint32_t h =
      static_cast<std::uint32_t>(index) * 2654435761u ^ (static_cast<std::uint32_t>(rank) + 1u) * 0x9E3779B9u;
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  return static_cast<float>(static_cast<int>(h % 17u) - 8);
}

}  // namespace dlsys::collectives
