#pragma once
// Text that stands around a figure and qualifies it (the step's caption, a result's marks and notes, a view's
// warning) in a band that can fold to one line: the line cut with "..." where it does not fit, the whole text on
// hover, and a click that opens the whole text (a click on it folds it again). Where the window is short of room
// (window_is_short), every such band folds, so the figure keeps the height.
#include <imgui.h>

#include <string>
#include <vector>

namespace dlsys::gui {

struct Band {
  std::string line;   // what the folded band shows, cut to fit
  std::string whole;  // what hovering shows, and what an open band shows
  ImU32 fill = 0;     // 0: the text alone, no band behind it (the caption)
  ImU32 edge = 0;     // the stripe on the band's left
  std::string name;   // for --widget-rects, and to remember that the band was opened
  std::string kept;   // after the cut line, always: "(+2 more notes)"
};

// Bands that always fold (a result's marks): side by side on one line of `width`, each cut to its share; a band that
// was clicked open shows its whole text under that line, across the width.
void draw_folded_bands(const std::vector<Band>& bands, float width);
float folded_bands_height(const std::vector<Band>& bands, float width);  // with the gap under them; 0 for none
// One band across `width`: its whole text, wrapped; folded to one line where the window is short of room, unless
// it was clicked open.
void draw_band(const Band& band, float width);
// Whether draw_band folds the band now.
bool band_folds(const Band& band);
// A band drawn whole by its owner (the caption's box) folds again when the last item was clicked while the window
// is short of room.
void fold_band_on_click(const Band& band);

}  // namespace dlsys::gui
