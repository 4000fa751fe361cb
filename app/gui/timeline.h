#pragma once
// The timeline widget: one lane per device, spans coloured by op kind and shaded by micro-batch, labelled when they
// are wide enough. Ctrl + mouse wheel zooms around the cursor, dragging pans, double-click fits. Like Tracy, it draws
// only the spans in view and folds runs of spans narrower than a few pixels into one grey block, so p = 16, m = 256
// schedules stay smooth under software rendering.
#include <imgui.h>

#include <string>
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

// What a view may draw over a timeline besides its spans: arrows for the messages between lanes, and bands that
// pick out a stretch of time on each lane (a phase of the schedule), everything outside them dimmed.
struct TimelineArrow {
  int from_lane = 0, to_lane = 0;
  double sent = 0, arrives = 0;
};
struct TimelineBand {
  int lane = 0;
  double start = 0, end = 0;  // an empty band dims its whole lane
};
struct TimelineMarks {
  std::vector<TimelineArrow> arrows;
  std::string arrows_label;  // legend text for the arrows: "message between devices (48)"
  std::vector<TimelineBand> bands;
  std::string bands_label;  // legend text for the bands: "warm-up"
};

// Draws `timelines` either stacked (one block of lanes each) or overlaid (every timeline in the same lanes: the first
// filled, later ones as outlines). Idle time on the lanes is hatched and labelled "bubble"; a legend under the time
// axis names what is drawn (F, B, W, the reverse direction's band, the bubble, the marks). `marks[i]` (optional,
// nullptr for none) is drawn over timeline i. Returns the span under the mouse, if any; the caller shows its tooltip.
TimelineHover draw_timelines(const char* id, const std::vector<const Timeline*>& timelines, bool overlay,
                             TimelineViewState& view, ImVec2 size, const std::vector<const TimelineMarks*>& marks = {});

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
