#pragma once
// Text cut to a width: one line where a widget has room for no more.
#include <string>

namespace dlsys::gui {

// `text`'s first line with `kept` after it, or the longest start of it that fits `width` (in the current font) with
// " ..." and `kept` after it.
std::string fitted_text(const std::string& text, const std::string& kept, float width);

}  // namespace dlsys::gui
