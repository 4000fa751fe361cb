#pragma once
// Device fills shared by the collectives between processes: a rank's inputs (inputs.h) and a poison value, so an
// element a collective never wrote shows up as wrong.
#include <algorithm>
#include <cstdint>

#include "kernels/collectives/inputs.h"

namespace dlsys::collectives::cuda {

static __global__ void fill_rank_inputs(float* send, int rank, std::int64_t count) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x)
    send[i] = input_value(rank, i);
}

static __global__ void fill_value(float* out, float value, std::int64_t count) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x)
    out[i] = value;
}

// Blocks of 256 threads for a grid-stride loop over `count` elements.
inline unsigned grid_for(std::int64_t count) {
  return static_cast<unsigned>(std::clamp<std::int64_t>((count + 255) / 256, 1, 4096));
}

}  // namespace dlsys::collectives::cuda
