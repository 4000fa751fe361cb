#pragma once
// The oracle for every collective run. Inputs are small integers (-8..8) stored as floats, so every partial sum is
// exact in fp32 whatever order the ranks add in: a result is right only if it equals the reference exactly, and
// `wrong` counts the elements that do not (as nccl-tests' #wrong column does).
#include <cstdint>
#include <vector>

#include "kernels/collectives/collectives.h"

namespace dlsys::collectives {

// Rank `rank`'s input element `index`: a hash of both, so chunks and ranks differ.
inline float input_value(int rank, std::int64_t index) {
  std::uint32_t h = static_cast<std::uint32_t>(index) * 2654435761u ^ (static_cast<std::uint32_t>(rank) + 1u) * 0x9E3779B9u;
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  return static_cast<float>(static_cast<int>(h % 17u) - 8);
}

// send: (count) of rank `rank`'s inputs. Threads split the work (first touch of large buffers is slow on one core).
void fill_inputs(float* send, int rank, std::int64_t count, int threads);
// Elements of the ranks' recv buffers that differ from what `op` must leave there: for all-reduce the whole sum,
// for reduce-scatter the owned chunk of the sum, for all-gather every chunk equal to its owner's input.
std::int64_t count_wrong(Op op, const std::vector<float*>& recv, std::int64_t count, int threads);

}  // namespace dlsys::collectives
