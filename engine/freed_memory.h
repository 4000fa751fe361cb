#pragma once
// Where memory a run frees goes while it measures. glibc by default returns every freed block of 128 KiB or more to
// the kernel (munmap, or a trim of the heap's top), so a run that allocates a step's activations and frees them again
// maps fresh pages, and pays their page faults, at every op: the pipeline's op times came out uneven by a tenth and
// its measured bubble 0.05 above the same run's later sweep. A framework's caching allocator keeps freed blocks for
// the next allocation; while a KeepFreedMemory lives, glibc does the same for blocks up to 32 MiB, and the memory the
// run freed goes back to the system when the last one ends. The ledger counts live buffers either way.
namespace dlsys {

class KeepFreedMemory {
 public:
  KeepFreedMemory();
  ~KeepFreedMemory();
  KeepFreedMemory(const KeepFreedMemory&) = delete;
  KeepFreedMemory& operator=(const KeepFreedMemory&) = delete;
};

}  // namespace dlsys
