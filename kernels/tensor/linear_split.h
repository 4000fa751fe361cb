#pragma once
// y = x W split over t CPU ranks two ways, on tiny inputs, keeping the record of what every rank held (the lesson's
// first two steps draw it). The course's layout (T17): x is (1, d_in), W is (d_in, d_out), row-major.
//   column split: rank r holds columns [r d_out / t, (r + 1) d_out / t) of W and all of x, computes its slice of y,
//                 and an all-gather gives every rank the whole y;
//   row split:    rank r holds rows [r d_in / t, (r + 1) d_in / t) of W and the same slice of x, computes a partial y
//                 of full length, and an all-reduce sums the partials.
// Both use the lab's ring collectives on rank threads (TpGroup), the same code the layer uses.
#include <cstdint>
#include <vector>

namespace dlsys::tensor {

struct RankLinearRecord {
  std::vector<float> x;  // the part of x this rank holds
  std::vector<float> w;  // its shard of W, row-major
  std::int64_t w_rows = 0, w_cols = 0;
  std::int64_t first_row = 0, first_col = 0;  // where the shard sits in W
  std::vector<float> local;                   // what it computed alone: its slice of y (column) or its partial y (row)
  std::vector<float> result;                  // what it holds after the collective: y
};

struct LinearSplitRecord {
  bool column = true;  // column split (all-gather) or row split (all-reduce)
  std::vector<RankLinearRecord> ranks;
};

// x: (d_in); w: (d_in, d_out) row-major. `ranks` must divide d_out (column) or d_in (row).
LinearSplitRecord column_split(const std::vector<float>& x, const std::vector<float>& w, std::int64_t d_out, int ranks);
LinearSplitRecord row_split(const std::vector<float>& x, const std::vector<float>& w, std::int64_t d_out, int ranks);

// The course's worked example (T17): W = [[1,2,5,6],[3,4,7,8],[2,0,3,1],[-1,4,8,2]], x = [1,2,0,1], two ranks.
std::vector<float> course_x();
std::vector<float> course_w();
inline constexpr std::int64_t kCourseDim = 4;
inline constexpr int kCourseRanks = 2;

}  // namespace dlsys::tensor
