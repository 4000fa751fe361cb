// Cache flushing (cache_flush.h): clflushopt where the CPU has it, else clflush, then a fence so every line is out
// before the timed code starts.
#include "kernels/common/cache_flush.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define DLSYS_HAVE_CLFLUSH 1
#endif

namespace dlsys {

void evict_from_caches(const void* p, std::size_t bytes) {
#if DLSYS_HAVE_CLFLUSH
  const char* bytes_at = static_cast<const char*>(p);
#if defined(__CLFLUSHOPT__)
  // clflushopt: the flushes of different lines need not wait for each other, several times faster than clflush.
  for (std::size_t i = 0; i < bytes; i += 64) _mm_clflushopt(const_cast<char*>(bytes_at + i));
  if (bytes > 0) _mm_clflushopt(const_cast<char*>(bytes_at + bytes - 1));
#else
  for (std::size_t i = 0; i < bytes; i += 64) _mm_clflush(bytes_at + i);
  if (bytes > 0) _mm_clflush(bytes_at + bytes - 1);
#endif
  _mm_mfence();
#else
  (void)p;
  (void)bytes;
#endif
}

bool can_evict_from_caches() {
#if DLSYS_HAVE_CLFLUSH
  return true;
#else
  return false;
#endif
}

}  // namespace dlsys
