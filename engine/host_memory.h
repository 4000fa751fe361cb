#pragma once
// The one rule for "does this run fit in host memory": what it will allocate against the memory free now, less a
// headroom for the operating system, other processes and the allocator's own overhead. Lessons refuse in `validate`
// with this before anything is allocated, so an oversized request is bad input (exit 2), not an out-of-memory crash.
#include <cstdint>

namespace dlsys {

// A run may use at most this share of the host memory free when it starts.
inline constexpr double kHostMemoryHeadroom = 0.8;

struct HostMemory {
  double free_bytes = 0;  // MemAvailable when asked
  double budget_bytes() const { return kHostMemoryHeadroom * free_bytes; }
  bool fits(double bytes) const { return bytes <= budget_bytes(); }
};

// Reads the free host memory now (cheap: /proc).
HostMemory host_memory();

}  // namespace dlsys
