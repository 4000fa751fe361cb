#pragma once
// Horizontal bars from zero, one per row: a label column on the left, the bar, and a text after it. Shared by the
// views that compare a few measured quantities side by side (fusion's times, matmul's share of the library).
#include <imgui.h>

#include <string>
#include <vector>

namespace dlsys::gui {

struct Bar {
  std::string label;
  double value = 0;
  ImU32 color = 0;
  std::string text;  // drawn after the bar
};

struct BarChartStyle {
  float row_lines = 1.7f;  // row height in text lines
  double full_scale = 0;   // the value drawn full length; at least the largest value
  std::string title;       // drawn above the bars; a chart with a title is reported as a figure (--widget-rects)
  float height = 0;        // points for the whole chart, title included: rows share it (0: rows of `row_lines`)
};

// Labels wider than about a third of the view are cut at their column's edge (whole on hover), so the bars always
// keep the room to be read.
void draw_bars(const std::vector<Bar>& bars, const BarChartStyle& style = {});

}  // namespace dlsys::gui
