#pragma once
// The other half of the CPU ceiling. The engine's probe (backend.h, measure_copy_bandwidth_gbps) times memcpy, which
// on this machine writes through the cache; the ring writes its results with streaming stores, so a fair ceiling is
// the faster of the two ways of copying. This probe times the ring's own streaming copy the same way.
#include <cstdint>

namespace dlsys::collectives {

// Bytes copied per second by `threads` threads, each copying bytes_per_thread with streaming stores (GB/s, 1e9).
double streaming_copy_bandwidth_gbps(int threads, std::int64_t bytes_per_thread);

}  // namespace dlsys::collectives
