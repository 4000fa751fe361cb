#include "lessons/hardware/hardware_levels.h"

#include <algorithm>
#include <cmath>

#include "kernels/hardware/hardware.h"

namespace dlsys::hardware {

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

std::vector<Tier> tiers_of(const std::vector<CpuCache>& caches) {
  std::vector<Tier> tiers;
  for (const CpuCache& c : caches) tiers.push_back({"L" + std::to_string(c.level), c.size_bytes});
  tiers.push_back({"DRAM", 0});
  return tiers;
}

std::size_t tier_by_size(const std::vector<Tier>& tiers, double bytes) {
  for (std::size_t i = 0; i + 1 < tiers.size(); ++i)
    if (bytes <= tiers[i].capacity_bytes) return i;
  return tiers.size() - 1;
}

bool in_band(const std::vector<Tier>& tiers, std::size_t i, double bytes) {
  const bool last = i + 1 == tiers.size();
  return (i == 0 || bytes > tiers[i - 1].capacity_bytes) && (last || bytes <= tiers[i].capacity_bytes);
}

namespace {

// The working sets that may make level i's plateau: those in its band. Main memory's band starts past the reported
// last-level cache; where the sweep never got there, the last cache's working sets that are already a level step
// slower than its plateau stand in for it (a virtual machine reports its host's cache, of which it holds far less).
std::vector<std::size_t> band_points(const std::vector<Tier>& tiers, std::size_t i, const Staircase& s,
                                     const std::vector<LevelPlateau>& below, bool& inside_last_cache) {
  std::vector<std::size_t> band;
  for (std::size_t p = 0; p < s.bytes.size(); ++p)
    if (in_band(tiers, i, s.bytes[p])) band.push_back(p);
  const bool memory = i + 1 == tiers.size();
  if (!memory || !band.empty() || below.empty() || below.back().points_inside == 0) return band;
  for (std::size_t p = 0; p < s.bytes.size(); ++p)
    if (in_band(tiers, i - 1, s.bytes[p]) && s.latency_ns[p] >= kLevelStepFactor * below.back().latency_ns)
      band.push_back(p);
  inside_last_cache = !band.empty();
  return band;
}

// Main memory's read rates: those of its band's slowest streams (within kMemoryReadSpread of the slowest). A stream
// that the prefetcher feeds still finds a large last cache where a random walk already misses it, so points on memory's
// latency plateau can read at the cache's rate.
std::vector<double> slowest_reads(const std::vector<std::size_t>& band, const std::vector<double>& read_gbps) {
  double slowest = INFINITY;
  for (const std::size_t p : band) slowest = std::min(slowest, read_gbps[p]);
  std::vector<double> out;
  for (const std::size_t p : band)
    if (read_gbps[p] <= kMemoryReadSpread * slowest) out.push_back(read_gbps[p]);
  return out;
}

}  // namespace

FoundLevels find_levels(const std::vector<Tier>& tiers, const Staircase& s) {
  FoundLevels out;
  const bool all_threads = !s.read_gbps_all.empty();
  for (std::size_t i = 0; i < tiers.size(); ++i) {
    const std::vector<std::size_t> band = band_points(tiers, i, s, out.levels, out.memory_inside_last_cache);
    // A cache's plateau is where its band begins (its later points may spill into the next level); main memory's is
    // where its band ends (its first points may still be partly served by the last cache, and nothing lies beyond).
    const bool memory = i + 1 == tiers.size();
    double lowest = INFINITY, highest = 0;
    for (const std::size_t p : band)
      lowest = std::min(lowest, s.latency_ns[p]), highest = std::max(highest, s.latency_ns[p]);
    std::vector<double> lat, one, all;
    for (const std::size_t p : band) {
      if (memory ? kPlateauSpread * s.latency_ns[p] < highest : s.latency_ns[p] > kPlateauSpread * lowest) continue;
      lat.push_back(s.latency_ns[p]);
      one.push_back(s.read_gbps_one[p]);
      if (all_threads) all.push_back(s.read_gbps_all[p]);
    }
    if (memory) {
      one = slowest_reads(band, s.read_gbps_one);
      if (all_threads) all = slowest_reads(band, s.read_gbps_all);
    }
    LevelPlateau level;
    level.name = tiers[i].name;
    level.capacity_bytes = tiers[i].capacity_bytes;
    level.latency_ns = median_of(lat);
    level.read_gbps_one = median_of(one);
    level.read_gbps_all = median_of(all);
    level.points_inside = static_cast<int>(lat.size());
    level.lines_in_flight = level.read_gbps_one * level.latency_ns / double(kCacheLineBytes);
    out.levels.push_back(level);
  }
  const double dram_gbps = out.levels.back().read_gbps_one;
  for (LevelPlateau& level : out.levels) level.read_over_dram = dram_gbps > 0 ? level.read_gbps_one / dram_gbps : 0;
  // Each point named by the nearest plateau, by ratio (the levels are a few times apart).
  std::vector<std::size_t> named(s.bytes.size(), out.levels.size());
  for (std::size_t p = 0; p < s.bytes.size(); ++p) {
    double best_distance = INFINITY;
    for (std::size_t i = 0; i < out.levels.size(); ++i) {
      if (out.levels[i].points_inside == 0 || !(s.latency_ns[p] > 0)) continue;
      const double distance = std::fabs(std::log(s.latency_ns[p] / out.levels[i].latency_ns));
      if (distance < best_distance) best_distance = distance, named[p] = i;
    }
    const bool found = named[p] < out.levels.size();
    out.served_by.push_back(found ? out.levels[named[p]].name : "");
    if (found) out.levels[named[p]].last_served_bytes = std::max(out.levels[named[p]].last_served_bytes, s.bytes[p]);
  }
  bool all_good = true;
  for (std::size_t i = 0; i < out.levels.size(); ++i) {
    LevelPlateau& level = out.levels[i];
    const bool last = i + 1 == out.levels.size();
    bool inside = level.points_inside > 0;
    for (std::size_t p = 0; p < s.bytes.size(); ++p) {
      if (named[p] != i) continue;
      // No level serves past its size (with the slack), and none serves a working set smaller than one a lower
      // level served: the staircase only steps up.
      inside = inside && (last || s.bytes[p] <= kBandSlack * tiers[i].capacity_bytes);
      for (std::size_t q = p + 1; q < s.bytes.size(); ++q) inside = inside && !(named[q] < i);
    }
    level.in_band = inside;
    const bool steps_up = i == 0 || level.latency_ns >= kLevelStepFactor * out.levels[i - 1].latency_ns;
    all_good = all_good && inside && steps_up;
  }
  out.plateaus_in_bands = all_good;
  return out;
}

}  // namespace dlsys::hardware
