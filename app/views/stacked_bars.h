#pragma once
// Vertical stacked bars: one bar per case, its parts stacked bottom up (a GPU's memory by kind), the total above each
// bar, an optional dashed limit line (the GPU's memory) and a key of the parts. Shared by the ZeRO lesson's figures
// and the parallelism planner's.
#include <imgui.h>

#include <string>
#include <vector>

namespace dlsys::gui {

struct StackPart {
  std::string name;
  ImU32 color = 0;
};

struct StackedBar {
  std::string label;
  std::vector<double> values;  // one per part, in the parts' order
  double total() const {
    double t = 0;
    for (double v : values) t += v;
    return t;
  }
};

// Bytes in few characters, decimal units (GB = 1e9): "17.5 GB".
std::string short_bytes(double bytes);

// At the cursor, `height` points tall (at least a few lines), `chart_width` wide (0: the available width); the limit
// line is drawn when `limit` > 0.
// `total_text` writes each bar's total (bytes by default).
using TotalText = std::string (*)(double total);
void draw_stacked_bars(const std::vector<StackPart>& parts, const std::vector<StackedBar>& bars, float height,
                       double limit = 0, const std::string& limit_label = "", float chart_width = 0,
                       const std::string& title = "", TotalText total_text = short_bytes);

}  // namespace dlsys::gui
