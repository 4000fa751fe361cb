#pragma once
// Idle time on a timeline's lanes: the gaps before the first span, between spans, and after the last one up to the
// timeline's end. The timeline widget and the SVG export shade them and label them "bubble".
#include <vector>

#include "engine/run_result.h"

namespace dlsys {

struct IdleGap {
  int lane = 0;
  double start = 0;
  double end = 0;
};

// Span indices per lane, ordered by start time (a measured timeline from several threads need not be ordered).
std::vector<std::vector<int>> spans_by_lane(const Timeline& timeline);
// The end of the last span (0 for an empty timeline).
double timeline_end(const Timeline& timeline);
// The gaps of one lane within [0, end] longer than `min_length` (spans overlapping each other leave no gap).
std::vector<IdleGap> lane_idle_gaps(const std::vector<TimelineSpan>& spans, const std::vector<int>& lane_order,
                                    int lane, double end, double min_length);

}  // namespace dlsys
