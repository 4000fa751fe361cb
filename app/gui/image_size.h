#pragma once
#include <string>

namespace dlsys::gui {

struct PixelSize {
  int width = 0;
  int height = 0;
};

// "1600x900" -> {1600, 900}; throws BadInput naming the value and the allowed range (64 to 8192 a side).
PixelSize parse_pixel_size(const std::string& text);
// The largest image side an export makes (OpenGL's renderbuffer limit on common drivers).
inline constexpr int kMaxImageSide = 16384;

}  // namespace dlsys::gui
