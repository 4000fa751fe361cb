#pragma once
// Traces of the real tiled kernel for the lesson's step-by-step views: small problems run through v2_flash on one
// thread with its trace hook on, every tile's state recorded in the order the loops visit the tiles.
#include <cstdint>
#include <vector>

#include "kernels/attention/attention.h"

namespace dlsys::attention {

struct TraceRequest {
  std::int64_t n = 16;
  std::int64_t d = 4;
  bool causal = false;
  Tiling tiling{4, 4};
  LoopOrder order = LoopOrder::KvOuter;
  std::uint32_t seed = 7;
};

struct FlashTrace {
  Problem problem;
  Tiling tiling;
  LoopOrder order = LoopOrder::KvOuter;
  std::vector<double> q, k, v;    // (n, d) the inputs as the kernel saw them
  std::vector<TileRecord> tiles;  // one per tile, in loop order
  std::vector<double> output;     // (n, d) the kernel's final O
  std::vector<double> reference;  // (n, d) the double reference (empty for the worked example)
  Traffic counted;                // main-memory traffic the kernel's loads and stores added up to
};

// Sizes a trace may have: enough to draw every tile and read every number.
inline constexpr std::int64_t kMaxTraceN = 64;
inline constexpr std::int64_t kMaxTraceD = 16;

// Runs v2_flash<float> (the kernel `run` measures; with its trace hook on it takes the plain fold, plain_fold.h, which
// keeps the same state as the measured vector fold) on seeded random q, k, v in [-1, 1) with scale 1/sqrt(d).
// Throws BadInput when n, d or the tiles are outside 1..kMaxTraceN, 1..kMaxTraceD, 1..n.
FlashTrace trace_flash(const TraceRequest& request);

// The course's worked example through v2_flash<double>: n = 4 keys with scores [1, 3, 0, 2] for query 0
// (k_j = [s_j, 0], q_0 = [1, 0], scale 1: the scores are given, already scaled), the course's values as V, one Q block
// of all four queries (br = 4) and K/V tiles of two (bc = 2): two tiles. Queries 1..3 ([0.5, 0], [0, 0], [-1, 0]) only
// fill the block. Row 0 of each record is the example's state after that tile.
FlashTrace trace_worked_example(LoopOrder order);

}  // namespace dlsys::attention
