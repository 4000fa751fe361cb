#pragma once
// What the matmul steps draw before a run, from the closed forms: the operation counts of C = A B and the
// main-memory traffic of the naive loop, a tiled kernel and perfect reuse, with their arithmetic intensity.
#include <cstdint>
#include <memory>

#include "kernels/matmul/tile_math.h"
#include "lessons/common/step_data.h"

namespace dlsys::matmul {

struct Traffic {
  double bytes = 0;
  double flop_per_byte = 0;
};

struct MatmulSteps final : StepData {
  Shape shape;
  double multiplications = 0, additions = 0, flops = 0;  // m n k, m n (k - 1), 2 m n k
  int tile = 0;                                          // the tile edge the traffic step uses
  std::int64_t tiles_m = 0, tiles_n = 0, tiles_k = 0;    // ceil(m / tile), ...
  Traffic naive, tiled, minimum;
};

std::shared_ptr<const MatmulSteps> make_steps(const Shape& shape, int tile);

}  // namespace dlsys::matmul
