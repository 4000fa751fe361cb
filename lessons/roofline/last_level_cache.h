#pragma once
// The size of the CPU's largest cache, from Linux's sysfs (/sys/devices/system/cpu/cpu0/cache/index*/): the size an
// array must far exceed before a streaming kernel measures main memory rather than a cache. Read-only and cheap.
namespace dlsys {

// Bytes of the highest-level data or unified cache of CPU 0; 0 when the system does not say.
double last_level_cache_bytes();

}  // namespace dlsys
