#include <doctest/doctest.h>

#if DLSYS_HAVE_GUI
#include "app/gui/timeline_folds.h"

using namespace dlsys;
using dlsys::gui::folded_time;
using dlsys::gui::outlier_folds;
using dlsys::gui::TimeFold;

namespace {
// Two lanes of forward ops of 1 us each, one after the other; lane 1 starts each op as lane 0's ends.
Timeline two_lanes(const char* source, double slow_length) {
  Timeline t{"run", source, "concurrent", "us", {"device 0", "device 1"}, {}};
  double at = 0;
  for (int i = 0; i < 6; ++i) {
    const double length = i == 3 ? slow_length : 1.0;  // op 3 on lane 0 may be the outlier
    t.spans.push_back({0, at, at + length, "F", i, 0, "F"});
    t.spans.push_back({1, at + length, at + length + 1, "F", i, 0, "F"});
    at += length;
  }
  return t;
}
}  // namespace

TEST_CASE("a measured op many times its kind's median is folded, keeping two medians of it and its end") {
  const Timeline t = two_lanes("measured", 20);  // F3 on lane 0: 20 us against a median of 1 us
  const std::vector<TimeFold> folds = outlier_folds({&t});
  REQUIRE(folds.size() == 1);
  // F3 runs 3..23; lane 1's F2 ends at 4, so the quiet stretch is 5 (3 + 2 medians) .. 23 (F3's end).
  CHECK(folds[0].start == doctest::Approx(5));
  CHECK(folds[0].end == doctest::Approx(23));
  // Times before the fold stay, times after it move back by its length, a time inside maps to its start.
  CHECK(folded_time(folds, 2) == doctest::Approx(2));
  CHECK(folded_time(folds, 10) == doctest::Approx(5));
  CHECK(folded_time(folds, 24) == doctest::Approx(6));
  // The folded run keeps every span's order and its ends: F3 now lasts 2 us.
  const Timeline f = dlsys::gui::folded_timeline(t, folds);
  CHECK(f.spans[6].end - f.spans[6].start == doctest::Approx(2));
  CHECK(f.spans.back().end == doctest::Approx(26 - 18));
}

TEST_CASE("no fold for theory, for ops within the factor, or for kinds with too few ops to have a median") {
  const Timeline theory = two_lanes("theory", 20);
  CHECK(outlier_folds({&theory}).empty());
  const Timeline modest = two_lanes("measured", 3.9);  // under 4 medians
  CHECK(outlier_folds({&modest}).empty());
  Timeline lonely{"run", "measured", "concurrent", "us", {"device 0"}, {}};
  lonely.spans = {{0, 0, 1, "F", 0, 0, "F"}, {0, 1, 2, "F", 1, 0, "F"}, {0, 2, 50, "AR", 0, 0, "AR"}};
  CHECK(outlier_folds({&lonely}).empty());
}

TEST_CASE("a fold never hides another timeline's event drawn on the same axis") {
  const Timeline measured = two_lanes("measured", 20);
  Timeline theory{"replay", "theory", "simulated", "us", {"device 0"}, {}};
  theory.spans = {{0, 0, 12, "F", 0, 0, "F"}};  // ends at 12, inside F3's stretch
  const std::vector<TimeFold> folds = outlier_folds({&measured, &theory});
  REQUIRE(folds.size() == 1);
  CHECK(folds[0].start == doctest::Approx(12));  // 12..23 is longer than 5..12
  CHECK(folds[0].end == doctest::Approx(23));
}
#endif
