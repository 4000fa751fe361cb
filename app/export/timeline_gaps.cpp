#include "app/export/timeline_gaps.h"

#include <algorithm>

namespace dlsys {

std::vector<std::vector<int>> spans_by_lane(const Timeline& t) {
  std::vector<std::vector<int>> lanes(t.lanes.size());
  for (int i = 0; i < static_cast<int>(t.spans.size()); ++i) {
    const int lane = t.spans[i].lane;
    if (lane >= 0 && lane < static_cast<int>(lanes.size())) lanes[lane].push_back(i);
  }
  for (auto& lane : lanes)
    std::stable_sort(lane.begin(), lane.end(), [&](int a, int b) { return t.spans[a].start < t.spans[b].start; });
  return lanes;
}

double timeline_end(const Timeline& t) {
  double end = 0;
  for (const auto& s : t.spans) end = std::max(end, s.end);
  return end;
}

std::vector<IdleGap> lane_idle_gaps(const std::vector<TimelineSpan>& spans, const std::vector<int>& lane_order,
                                    int lane, double end, double min_length) {
  std::vector<IdleGap> gaps;
  double busy_until = 0;
  auto gap_to = [&](double t) {
    if (t - busy_until > min_length) gaps.push_back({lane, busy_until, t});
  };
  for (int i : lane_order) {
    gap_to(std::min(spans[i].start, end));
    busy_until = std::max(busy_until, spans[i].end);
  }
  gap_to(end);
  return gaps;
}

}  // namespace dlsys
