// The test plots use to keep labels off their lines: a segment passes through a box, or it does not.
#include <doctest/doctest.h>

#if DLSYS_HAVE_GUI
#include "app/gui/plot_geometry.h"

using dlsys::gui::segment_crosses_box;

TEST_CASE("a segment crosses a box when it passes through it, ends in it, or runs along an edge; not beside it") {
  const ImVec4 box{10, 10, 20, 20};
  CHECK(segment_crosses_box({0, 15}, {30, 15}, box));            // straight through
  CHECK(segment_crosses_box({15, 15}, {40, 40}, box));           // starts inside
  CHECK(segment_crosses_box({0, 0}, {30, 30}, box));             // the diagonal
  CHECK(segment_crosses_box({0, 10}, {30, 10}, box));            // along the top edge
  CHECK(segment_crosses_box({15, 0}, {15, 5}, box) == false);    // stops short of it
  CHECK(segment_crosses_box({0, 25}, {30, 25}, box) == false);   // passes below it
  CHECK(segment_crosses_box({15, 27}, {27, 15}, box) == false);  // passes its corner
  CHECK(segment_crosses_box({21, 0}, {21, 30}, box) == false);   // vertical, right of it
}
#endif
