#pragma once
// Flushing a buffer from the CPU's caches, so that the next read comes from main memory, as a layer's weights do in
// decoding once the other layers have passed through the caches: before each timed call of the quant lesson's GEMVs,
// the serving lesson's passes, the roofline's large arrays, and the read stream they are compared with.
#include <cstddef>

namespace dlsys {

// Flushes [p, p + bytes) from every cache level (on x86; nothing elsewhere, which can_evict_from_caches says).
void evict_from_caches(const void* p, std::size_t bytes);
bool can_evict_from_caches();

}  // namespace dlsys
