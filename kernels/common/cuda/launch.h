#pragma once
// Launch shape of the lab's grid-stride kernels: 256 threads per block, one block per 256 elements up to 65,536
// blocks (many times any GPU's SMs); the kernel's loop covers whatever is left.
#include <cstdint>

namespace dlsys::cuda {

inline constexpr int kGridStrideThreads = 256;

inline unsigned grid_stride_blocks(std::int64_t n) {
  constexpr std::int64_t kMaxBlocks = 65536;
  const std::int64_t wanted = (n + kGridStrideThreads - 1) / kGridStrideThreads;
  return static_cast<unsigned>(wanted < 1 ? 1 : (wanted < kMaxBlocks ? wanted : kMaxBlocks));
}

}  // namespace dlsys::cuda
