#include <doctest/doctest.h>

#include "app/export/timeline_gaps.h"

TEST_CASE("idle gaps of a lane: before the first span, between spans, after the last up to the end") {
  using dlsys::TimelineSpan;
  // Spans out of order, one overlapping the next (a measured timeline from several threads).
  const std::vector<TimelineSpan> spans = {
      {0, 5, 7, "B", 0, 0, "B0"}, {0, 1, 2, "F", 0, 0, "F0"}, {0, 2, 3, "F", 1, 0, "F1"}, {0, 6.5, 8, "B", 1, 0, "B1"}};
  dlsys::Timeline t{"x", "theory", "simulated", "units", {"device 0"}, spans};
  const auto order = dlsys::spans_by_lane(t);
  REQUIRE(order.size() == 1);
  CHECK(order[0] == std::vector<int>{1, 2, 0, 3});
  CHECK(dlsys::timeline_end(t) == 8);
  const auto gaps = dlsys::lane_idle_gaps(t.spans, order[0], 0, 10, 0);
  REQUIRE(gaps.size() == 3);
  CHECK(gaps[0].start == 0);
  CHECK(gaps[0].end == 1);
  CHECK(gaps[1].start == 3);
  CHECK(gaps[1].end == 5);
  CHECK(gaps[2].start == 8);
  CHECK(gaps[2].end == 10);
  // Gaps no longer than the minimum are left out.
  CHECK(dlsys::lane_idle_gaps(t.spans, order[0], 0, 10, 1.5).size() == 2);
}

#if DLSYS_HAVE_GUI
#include <numeric>

#include "app/gui/timeline.h"

using namespace dlsys;

namespace {
// `count` back-to-back spans of one time unit each in lane 0.
std::vector<TimelineSpan> back_to_back(int count) {
  std::vector<TimelineSpan> spans;
  for (int i = 0; i < count; ++i) spans.push_back({0, double(i), double(i + 1), "F", i, 0, "F" + std::to_string(i)});
  return spans;
}
}  // namespace

TEST_CASE("timeline layout draws only visible spans and folds the narrow ones") {
  const auto spans = back_to_back(1000);
  std::vector<int> order(spans.size());
  std::iota(order.begin(), order.end(), 0);

  // 1000 spans on 100 px: every span is 0.1 px wide, so all fold into one block standing for all of them.
  const auto folded = gui::layout_lane(spans, order, 0, 1000, 0, 100, 3);
  REQUIRE(folded.size() == 1);
  CHECK(folded[0].folded == 1000);
  CHECK(folded[0].span == -1);

  // Zoomed to 10 units on 100 px: ten 10-px spans, drawn one by one, nothing outside the view.
  const auto zoomed = gui::layout_lane(spans, order, 500, 510, 0, 100, 3);
  REQUIRE(zoomed.size() == 10);  // spans 500 .. 509; 499 and 510 only touch the edges
  CHECK(zoomed[0].span == 500);
  CHECK(zoomed[0].x0 == doctest::Approx(0));
  CHECK(zoomed[0].x1 == doctest::Approx(10));
  CHECK(zoomed[0].folded == 0);
  CHECK(zoomed[9].span == 509);

  // A lone narrow span keeps its identity (it can still be hovered).
  std::vector<TimelineSpan> sparse = {{0, 0, 0.001, "W", 1, 0, "W1"}, {0, 500, 1000, "B", 1, 0, "B1"}};
  const auto lone = gui::layout_lane(sparse, {0, 1}, 0, 1000, 0, 100, 3);
  REQUIRE(lone.size() == 2);
  CHECK(lone[0].span == 0);
  CHECK(lone[0].folded == 1);
  CHECK(lone[1].span == 1);
}
#endif
