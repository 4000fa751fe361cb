#include "app/gui/image_size.h"

#include <fmt/format.h>

#include <charconv>

#include "engine/errors.h"
#include "engine/json_io.h"

namespace dlsys::gui {

namespace {
// Digits only, no sign or spaces, and no wrap-around: "4294967360" is refused, not read as 64.
bool parse_side(std::string_view digits, int& side) {
  if (digits.empty() || digits.size() > 5) return false;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), side);
  return error == std::errc() && end == digits.data() + digits.size();
}
}  // namespace

PixelSize parse_pixel_size(const std::string& text) {
  PixelSize size;
  const std::size_t x = text.find('x');
  const bool parsed = x != std::string::npos && parse_side(std::string_view(text).substr(0, x), size.width) &&
                      parse_side(std::string_view(text).substr(x + 1), size.height);
  if (!parsed || size.width < 64 || size.height < 64 || size.width > 8192 || size.height > 8192)
    throw BadInput(fmt::format("size '{}' is not allowed; allowed: WxH with each side from 64 to 8192, e.g. 1600x900",
                               clip_for_message(text)));
  return size;
}

}  // namespace dlsys::gui
