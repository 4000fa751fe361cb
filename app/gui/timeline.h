#pragma once
// The timeline widget: one lane per device, spans coloured by op kind and shaded by micro-batch, labelled when they
// are wide enough. Ctrl + mouse wheel zooms around the cursor, dragging pans, double-click fits. Like Tracy, it draws
// only the spans in view and folds runs of spans narrower than a few pixels into one grey block, so p = 16, m = 256
// schedules stay smooth under software rendering.
#include <imgui.h>

#include <vector>

#include "engine/run_result.h"

namespace dlsys::gui {

struct TimelineViewState {
  double view_start = 0;  // visible time range, in the timelines' unit
  double view_end = 0;
  bool fitted = false;  // false: fit to the data on the next draw
  double data_end = 0;  // makespan of the longest timeline last drawn
};

struct TimelineHover {
  int timeline = -1;  // index into the timelines drawn
  int span = -1;      // index into that timeline's spans
};

// Draws `timelines` either stacked (one block of lanes each) or overlaid (every timeline in the same lanes: the first
// filled, later ones as outlines). Returns the span under the mouse, if any; the caller shows its tooltip.
TimelineHover draw_timelines(const char* id, const std::vector<const Timeline*>& timelines, bool overlay,
                             TimelineViewState& view, ImVec2 size);

// What folding does to a lane, for tests: pixel ranges [x0, x1) of what is drawn, merging runs of spans narrower
// than `fold_px` (and closer than 1 px to each other) into one block flagged `folded`.
struct DrawnBlock {
  float x0 = 0;
  float x1 = 0;
  int span = -1;   // the span drawn; -1 when the block stands for several folded spans
  int folded = 0;  // 0: a span wide enough to draw; 1: one narrow span; n > 1: n narrow spans merged
};
std::vector<DrawnBlock> layout_lane(const std::vector<TimelineSpan>& spans, const std::vector<int>& lane_order,
                                    double view_start, double view_end, float x0, float x1, float fold_px);

}  // namespace dlsys::gui
