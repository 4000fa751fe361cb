#pragma once
// Reproducible test inputs: uniform in [-1, 1) from a fixed seed, so a failure repeats exactly.
#include <cstdint>
#include <random>
#include <vector>

namespace dlsys::testing {

inline std::vector<float> random_values(std::int64_t count, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(count));
  for (auto& x : v) x = dist(gen);
  return v;
}

}  // namespace dlsys::testing
