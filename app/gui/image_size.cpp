#include "app/gui/image_size.h"

#include <cstdio>
#include <fmt/format.h>

#include "engine/errors.h"

namespace dlsys::gui {

PixelSize parse_pixel_size(const std::string& text) {
  PixelSize size;
  char tail = 0;
  const bool parsed = std::sscanf(text.c_str(), "%dx%d%c", &size.width, &size.height, &tail) == 2;
  if (!parsed || size.width < 64 || size.height < 64 || size.width > 8192 || size.height > 8192)
    throw BadInput(fmt::format("size '{}' is not allowed; allowed: WxH with each side from 64 to 8192, e.g. 1600x900", text));
  return size;
}

}  // namespace dlsys::gui
