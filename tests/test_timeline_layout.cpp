#include <doctest/doctest.h>

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
