#pragma once
// The one fill every kernel test, lesson and model uses for its inputs: a fixed linear congruential sequence, cheap
// and the same on every machine, so every run and every backend works on the same numbers.
#include <cstdint>
#include <span>

namespace dlsys {

// values[i] uniform in [-scale, scale), determined by `seed` alone.
inline void fill_seeded_uniform(std::span<float> values, std::uint32_t seed, float scale = 1.0f) {
  std::uint32_t state = seed;
  for (float& x : values) {
    state = state * 1664525u + 1013904223u;
    x = (static_cast<float>(state >> 8) / static_cast<float>(1u << 24) * 2.0f - 1.0f) * scale;
  }
}

// Neighbouring small seeds (stage 1, stage 2, ...) start the sequence far apart rather than one step apart.
constexpr std::uint32_t spread_seed(std::uint32_t seed) { return seed * 2654435761u + 12345u; }

}  // namespace dlsys
