#pragma once
// How tall a figure may be. The shell says how tall the lesson's view is before the view draws; no plot or timeline
// is drawn taller than that, so every figure can be seen whole at some scroll position, whatever the text size.
namespace dlsys::gui {

void set_view_height(float points);
float view_height();
// `height`, but no more than the view's height.
float within_view_height(float height);

}  // namespace dlsys::gui
