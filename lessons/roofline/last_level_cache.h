#pragma once
// The CPU's caches as Linux's sysfs reports them (/sys/devices/system/cpu/cpu0/cache/index*/): their levels, kinds,
// sizes and how many CPUs share each. The roofline lesson needs the largest (the size an array must far exceed before
// a streaming kernel measures main memory rather than a cache); the hardware lesson draws them all. Read-only and
// cheap.
#include <string>
#include <vector>

namespace dlsys {

struct CpuCache {
  int level = 0;          // 1, 2, 3
  std::string type;       // Data, Unified (instruction caches are left out)
  double size_bytes = 0;  // one instance of the cache
  int shared_cpus = 1;    // logical CPUs that share one instance (shared_cpu_list)
};

// CPU 0's data and unified caches, lowest level first; empty when the system does not say.
std::vector<CpuCache> cpu_caches();
// Bytes of the highest-level data or unified cache of CPU 0; 0 when the system does not say.
double last_level_cache_bytes();

}  // namespace dlsys
