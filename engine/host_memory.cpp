#include "engine/host_memory.h"

#include "engine/backend.h"

namespace dlsys {

HostMemory host_memory() { return HostMemory{.free_bytes = double(describe_cpu().memory_free_bytes)}; }

}  // namespace dlsys
