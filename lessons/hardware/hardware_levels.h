#pragma once
// Which level of the memory hierarchy serves a working set: by size (the OS's reported cache sizes) and by
// measurement (the latency staircase's plateaus, each named by the band of sizes it lies in).
#include <cstddef>
#include <string>
#include <vector>

#include "lessons/hardware/hardware_values.h"
#include "lessons/roofline/last_level_cache.h"

namespace dlsys::hardware {

// A level one thread's working set can sit in: a cache, or main memory (capacity 0: larger than any sweep).
struct Tier {
  std::string name;
  double capacity_bytes = 0;
};
// Each cache lowest level first ("L1", "L2", "L3"), then "DRAM".
// The middle value (the mean of the two middle ones for an even count), 0 for none.
double median_of(std::vector<double> values);
std::vector<Tier> tiers_of(const std::vector<CpuCache>& caches);
// The first level whose capacity is at least `bytes`.
std::size_t tier_by_size(const std::vector<Tier>& tiers, double bytes);
// Level i's band of sizes: above the level below's capacity, up to its own (main memory: no upper end).
bool in_band(const std::vector<Tier>& tiers, std::size_t i, double bytes);

// What the sweep measured, one entry per working set.
struct Staircase {
  std::vector<double> bytes, latency_ns, read_gbps_one, read_gbps_all;  // read_gbps_all empty on one thread
};
inline constexpr double kLevelStepFactor = 1.3;  // each level's plateau at least this much slower than the last
// A level's plateau: the working sets in its band whose latency is within this factor of the band's lowest (main
// memory's: of its highest; its read rates those of its slowest streams). A cache band's later points may already
// spill into the next level (a cache shared with other programs holds less than its size); memory's first points may
// still be partly cached.
inline constexpr double kPlateauSpread = 1.5;
// Main memory's read rate: the streams within this factor of its slowest. A prefetched stream out of DRAM reads at a
// steady rate, run after run; a working set of twice the last cache's size still reads a good part from it, 1.3-1.8
// times faster on this lab's 2-core machine, and must not lift memory's rate above STREAM's.
inline constexpr double kMemoryReadSpread = 1.15;
// A working set named for a level may lie up to this factor past the level's reported size and still count as
// served by it: at twice a cache's size a random walk still finds half its lines there.
inline constexpr double kBandSlack = 2;

struct FoundLevels {
  std::vector<LevelPlateau> levels;
  std::vector<std::string> served_by;
  bool plateaus_in_bands = false;
  // Main memory's plateau was found inside the reported last-level cache's band: no working set passed the reported
  // size, but the latency stepped up well before it.
  bool memory_inside_last_cache = false;
};
// Each level's plateau (medians over its points); each working set named by the plateau its latency is nearest to (in
// ratio); the check: every level has a plateau in its band, each kLevelStepFactor slower than the one below, no
// working set named for a level lies past its size (with kBandSlack), and no larger working set is named for a lower
// level. A cache that holds less than its reported size passes (its plateau ends early, inside the band; the next
// level takes over early); a plateau that runs on past the size does not. Where no working set passes the last cache's
// reported size, main memory's plateau is looked for among that cache's working sets a level step slower than it.
FoundLevels find_levels(const std::vector<Tier>& tiers, const Staircase& staircase);

}  // namespace dlsys::hardware
