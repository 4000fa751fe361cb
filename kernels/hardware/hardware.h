#pragma once
// The two probes of the memory hierarchy, each over a working set of a chosen size. Each teaches one thing:
//   pointer chase   every load's address is the value the previous load returned, so loads cannot overlap: the time
//                   per step is the latency of whichever level holds the working set. The links form one random
//                   cycle over whole cache lines (Sattolo's algorithm), so every line is visited once per lap, no
//                   line shares another's fetch, and the hardware prefetchers, which follow strides, find none.
//   read stream     the working set read front to back with vector loads into several independent sums: loads
//                   overlap and prefetchers help, so the time per byte is the bandwidth of that level. The sums are
//                   returned and checked, so the reads cannot be optimised away.
// Both split the working set into one contiguous part per thread when run on several threads: private caches then
// add up across cores, the shared last level and memory do not.
#include <cstdint>
#include <vector>

namespace dlsys::hardware {

inline constexpr std::int64_t kCacheLineBytes = 64;

// One cache line of a chase: the address of the next line, the rest of the line unused.
struct alignas(kCacheLineBytes) ChaseLine {
  const ChaseLine* next = nullptr;
  std::uint64_t unused[7] = {};
};
static_assert(sizeof(ChaseLine) == kCacheLineBytes);

// successor[i]: the line after line i in one cycle through all `count` lines, in an order drawn from `seed`
// (Sattolo's algorithm: a uniformly random cyclic permutation). count < 2^32.
std::vector<std::uint32_t> random_cycle_successors(std::int64_t count, std::uint64_t seed);
// The line a walk from `start` reaches after `steps` links of `successor`: where a chase of that many steps ends.
std::uint32_t line_after(const std::vector<std::uint32_t>& successor, std::uint32_t start, std::int64_t steps);

// Links lines[0, count) into one cycle through all of them, in an order drawn from `seed` (Sattolo's algorithm: a
// uniformly random cyclic permutation). count >= 1; one line links to itself.
void link_random_cycle(ChaseLine* lines, std::int64_t count, std::uint64_t seed);
// The same on each of `parts` contiguous parts of lines[0, count): one cycle per part, a thread chases each.
void link_random_cycles(ChaseLine* lines, std::int64_t count, int parts, std::uint64_t seed);
// Lines visited from `start` until the walk is back at `start`, or `limit` + 1 when it is not back after `limit`.
std::int64_t cycle_length(const ChaseLine* start, std::int64_t limit);

// Follows `steps` links from the first line of each of `threads` parts (as link_random_cycles made them), a thread
// per part, all at once. Returns the sum of the lines' offsets where the walks stopped, so the walks are kept.
std::int64_t chase(const ChaseLine* lines, std::int64_t count, int threads, std::int64_t steps);

// Reads x[0, n) `passes` times on `threads` threads (a contiguous part each), summing in fp32 lanes; returns the sum
// of one pass. Exact for values of 0 and 1 (the lesson's and the tests' fill) while each lane's sum over all passes
// stays under 2^24 (2 GiB read per call on one thread with 4-lane vectors at most).
double read_sum(const float* x, std::int64_t n, std::int64_t passes, int threads);

// What a kernel that only streams its data from main memory can read: read_sum over 64 MiB of ones on `threads`
// threads, the buffer flushed from the caches before each of a warm-up and 8 timed calls (kernels/common/
// cache_flush.h), checked; GB/s of the fastest call, as a ceiling is (a burst of other work slows some calls). The
// ceiling for reads of weights that are not in cache (a copy's bytes per second is not: it counts each byte once,
// though the copy both reads and writes it).
double measure_read_stream_gbps(int threads);

// Asks the system to back [data, data + bytes) with huge pages where it can (transparent huge pages, a hint it may
// ignore): a random walk over a large working set then misses the TLB far less, so the chase's latency is the
// memory's rather than the page table's. Only whole 2 MiB pages inside the range are advised; call it before the
// memory is first touched. Returns whether the system took the advice.
bool advise_huge_pages(void* data, std::int64_t bytes);

}  // namespace dlsys::hardware
