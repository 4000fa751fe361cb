#pragma once
// Blocks of queries handed to the workers of both CPU attention kernels one at a time, as each finishes its last: a
// worker whose core another process shares takes fewer blocks instead of holding the whole kernel up (a fixed split
// ends when its slowest share does). With several workers the blocks go out last first: under a causal mask the last
// blocks see the most keys, and the small ones left for the end even out the finish. One worker takes them in order
// (a traced run shows the tiles in the order of the loops).
#include <atomic>
#include <cstdint>

namespace dlsys::attention {

class BlockQueue {
 public:
  BlockQueue(std::int64_t blocks, std::int64_t workers) : blocks_(blocks), last_first_(workers > 1) {}
  // The next block to work on, or false when all are taken.
  bool take(std::int64_t& block) {
    const std::int64_t k = taken_.fetch_add(1, std::memory_order_relaxed);
    block = last_first_ ? blocks_ - 1 - k : k;
    return k < blocks_;
  }

 private:
  std::int64_t blocks_;
  bool last_first_;
  std::atomic<std::int64_t> taken_{0};
};

}  // namespace dlsys::attention
