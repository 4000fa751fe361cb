#pragma once
// The online (streaming) softmax for ONE row, in double, written out step by step so every intermediate value can be
// shown and checked: scores arrive a tile at a time and the row keeps its running max m, its running sum
// l = sum exp(s_j - m) and its running weighted sum z = sum exp(s_j - m) v_j. At the end o = z / l, exactly
// softmax(s) V. The tiled kernel does the same per row with the same merge (merge_factors in tile_math.h).
#include <cstdint>
#include <span>
#include <vector>

namespace dlsys::attention {

// The state after one tile was folded in.
struct OnlineSoftmaxStep {
  std::int64_t first = 0, count = 0;  // which scores the tile held
  double m_tile = 0, l_tile = 0;      // the tile alone: its max, sum of exp(s - m_tile)
  std::vector<double> z_tile;         // and sum of exp(s - m_tile) v
  double m_old = 0, l_old = 0;        // the row before
  double alpha = 0, beta = 0;         // exp(m_old - m_new), exp(m_tile - m_new)
  double m = 0, l = 0;                // the row after
  std::vector<double> z;
};

struct OnlineSoftmaxRow {
  std::vector<OnlineSoftmaxStep> steps;
  std::vector<double> o;  // z / l after the last tile
};

// scores: (n); values: (n, dv) row-major; tile: scores per tile (the last tile may be short).
OnlineSoftmaxRow online_softmax_row(std::span<const double> scores, std::span<const double> values, std::int64_t dv,
                                    std::int64_t tile);

// Plain softmax with the max subtracted, and the weighted sum of values it gives: the answer to compare with.
std::vector<double> softmax_weights(std::span<const double> scores);
std::vector<double> weighted_sum(std::span<const double> weights, std::span<const double> values, std::int64_t dv);

// The course's worked example (T8, section 11.1): scores [1, 3 | 0, 2] in two tiles of two,
// values v1 = [1, 0], v2 = [0, 2], v3 = [-1, 1], v4 = [3, 1].
struct WorkedExample {
  std::vector<double> scores{1, 3, 0, 2};
  std::vector<double> values{1, 0, 0, 2, -1, 1, 3, 1};  // (4, 2)
  std::int64_t dv = 2;
  std::int64_t tile = 2;
};

}  // namespace dlsys::attention
