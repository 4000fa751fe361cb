#pragma once
// How large the fusion lesson's arrays are by default. The lesson measures trips to main memory: its byte ratio is the
// speedup only when x, t and y come from DRAM, not from a cache. On a machine that reports a last-level cache as
// large as the course's three 64 MiB arrays, part of them may be served from it (a VM reporting a 480 MiB L3 measured
// a speedup of 2.44-2.50 at 4096 x 4096 against 1.88-2.10 at 8192 x 8192, the byte ratio being 2.00), so the default
// grows past it.
#include <cstdint>

namespace dlsys::fusion {

inline constexpr std::int64_t kCourseSide = 4096;  // the course's 4096 x 4096
inline constexpr std::int64_t kLargestDefaultSide = 16384;

// Whether x, t and y, `array_bytes` each, fit together in this machine's last-level cache (false when it is unknown).
bool arrays_fit_in_cache(double array_bytes);

// The default side of the square x: the course's 4096, doubled while its three fp32 arrays still fit in the
// last-level cache, up to kLargestDefaultSide.
std::int64_t default_side();

}  // namespace dlsys::fusion
