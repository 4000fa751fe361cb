#pragma once
// The attention that both placed-kernel stages (CPU and GPU) put on the roof, set up once: the problem, its inputs,
// its double reference, and the point a timed variant makes.
#include <cstdint>

#include "engine/host_buffer.h"
#include "engine/measure.h"
#include "kernels/attention/tile_math.h"
#include "lessons/roofline/roofline_measure.h"
#include "lessons/roofline/roofline_values.h"

namespace dlsys::roofline {

// n = attention_n queries and keys of head size 64, tiled as the flash lesson's default tiles them (Algorithm 1 with
// 48 KiB of fast memory, which fits any GPU's shared memory); Q, K and V filled from fixed seeds, O for a variant's
// output, and O's double reference computed on the run's threads (announced as a progress step).
struct AttentionCase {
  explicit AttentionCase(RooflineRun& run);
  std::int64_t n = 0, d = 0;
  attention::Problem problem;
  attention::Tiling tiling;
  HostBuffer<float> q, k, v, o;
  HostBuffer<double> reference;
  double flop = 0;  // both matmuls, as every variant counts them

  // The point of standard (flash = false) or flash attention from the bytes it moves and its timing, with the largest
  // error of O against the reference.
  RoofPoint point(bool flash, double bytes, const TimingStats& t) const;
};

}  // namespace dlsys::roofline
