// The pointer chase (hardware.h): Sattolo's shuffle, then one dependent load per step.
#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/parallel.h"
#include "kernels/hardware/hardware.h"

namespace dlsys::hardware {

namespace {

// splitmix64: a fast generator of well-mixed 64-bit values; the same sequence on every machine.
struct SplitMix {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, bound): the high half of a 64 x 64-bit product (Lemire), bias below 2^-40 for our bounds.
  std::uint64_t below(std::uint64_t bound) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next()) * bound) >> 64);
  }
};

}  // namespace

std::vector<std::uint32_t> random_cycle_successors(std::int64_t count, std::uint64_t seed) {
  // successor[i] is the line after line i. Sattolo: swapping each i only with a j strictly below it leaves one cycle
  // through every element (plain Fisher-Yates, j <= i, would leave several cycles and a walk would see only one).
  std::vector<std::uint32_t> successor(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) successor[std::size_t(i)] = std::uint32_t(i);
  SplitMix rng{seed};
  for (std::int64_t i = count - 1; i > 0; --i) {
    const auto j = static_cast<std::size_t>(rng.below(std::uint64_t(i)));
    std::swap(successor[std::size_t(i)], successor[j]);
  }
  return successor;
}

std::uint32_t line_after(const std::vector<std::uint32_t>& successor, std::uint32_t start, std::int64_t steps) {
  for (std::int64_t s = 0; s < steps; ++s) start = successor[start];
  return start;
}

void link_random_cycle(ChaseLine* lines, std::int64_t count, std::uint64_t seed) {
  const std::vector<std::uint32_t> successor = random_cycle_successors(count, seed);
  for (std::int64_t i = 0; i < count; ++i) lines[i].next = lines + successor[std::size_t(i)];
}

void link_random_cycles(ChaseLine* lines, std::int64_t count, int parts, std::uint64_t seed) {
  for (int p = 0; p < parts; ++p) {
    const std::int64_t begin = count * p / parts, end = count * (p + 1) / parts;
    link_random_cycle(lines + begin, end - begin, seed + std::uint64_t(p));
  }
}

std::int64_t cycle_length(const ChaseLine* start, std::int64_t limit) {
  const ChaseLine* at = start->next;
  std::int64_t length = 1;
  while (at != start && length <= limit) at = at->next, ++length;
  return length;
}

std::int64_t chase(const ChaseLine* lines, std::int64_t count, int threads, std::int64_t steps) {
  std::vector<std::int64_t> stopped_at(static_cast<std::size_t>(threads), 0);
  parallel_for(threads, threads, [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t t = first; t < last; ++t) {
      const ChaseLine* at = lines + count * t / threads;
      for (std::int64_t s = 0; s < steps; ++s) at = at->next;
      stopped_at[std::size_t(t)] = at - lines;
    }
  });
  std::int64_t sum = 0;
  for (std::int64_t offset : stopped_at) sum += offset;
  return sum;
}

bool advise_huge_pages(void* data, std::int64_t bytes) {
  constexpr std::uintptr_t kHugePage = 2u << 20;
  const auto begin = (reinterpret_cast<std::uintptr_t>(data) + kHugePage - 1) / kHugePage * kHugePage;
  const auto end = (reinterpret_cast<std::uintptr_t>(data) + std::uintptr_t(bytes)) / kHugePage * kHugePage;
  if (end <= begin) return false;
#if defined(MADV_HUGEPAGE)
  return madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE) == 0;
#else
  return false;
#endif
}

}  // namespace dlsys::hardware
