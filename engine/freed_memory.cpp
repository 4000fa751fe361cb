#include "engine/freed_memory.h"

#include <malloc.h>

#include <climits>
#include <mutex>

namespace dlsys {

namespace {

// glibc's defaults for both thresholds, and the largest block it will serve from a heap instead of its own mapping
// (DEFAULT_MMAP_THRESHOLD_MAX on 64-bit).
constexpr int kGlibcDefaultThresholdBytes = 128 * 1024;
constexpr int kLargestKeptBlockBytes = 32 * 1024 * 1024;

std::mutex keepers_mutex;
int keepers = 0;  // runs now keeping freed memory (tests run lessons side by side)

}  // namespace

KeepFreedMemory::KeepFreedMemory() {
  const std::lock_guard lock(keepers_mutex);
  if (keepers++ > 0) return;
  mallopt(M_MMAP_THRESHOLD, kLargestKeptBlockBytes);
  mallopt(M_TRIM_THRESHOLD, INT_MAX);
}

KeepFreedMemory::~KeepFreedMemory() {
  const std::lock_guard lock(keepers_mutex);
  if (--keepers > 0) return;
  mallopt(M_MMAP_THRESHOLD, kGlibcDefaultThresholdBytes);
  mallopt(M_TRIM_THRESHOLD, kGlibcDefaultThresholdBytes);
  malloc_trim(0);
}

}  // namespace dlsys
