#pragma once
// How tall a figure may be. The shell says how tall the lesson's view is before the view draws; no plot or timeline
// is drawn taller than that, so every figure can be seen whole at some scroll position, whatever the text size.
namespace dlsys::gui {

void set_view_height(float points);
float view_height();
// `height`, but no more than the view's height.
float within_view_height(float height);
// Whether the window is short of room for its text: under kShortWindowPoints tall in units of the 1x text (2x text in
// a 1280x720 window is 360 of them; 1x text there, and presentation mode at 1920x1080, are 720). What stands around
// a figure then folds to one line (folded_band.h) and diagrams take their flatter layouts, so the figure gets the
// height. Ask outside a figure drawn with smaller text (begin_fitted_figure), whose text scale it would count.
bool window_is_short();
inline constexpr float kShortWindowPoints = 600;

}  // namespace dlsys::gui
