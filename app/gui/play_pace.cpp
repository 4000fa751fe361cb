#include "app/gui/play_pace.h"

#include <algorithm>
#include <cctype>

namespace dlsys::gui {

double play_seconds_for_caption(const std::string& caption) {
  int words = 0;
  bool in_word = false;
  for (const char c : caption) {
    const bool space = std::isspace(static_cast<unsigned char>(c)) != 0;
    if (!space && !in_word) ++words;
    in_word = !space;
  }
  return std::clamp(words / kPlayWordsPerSecond + kPlayLookSeconds, kPlayLeastSeconds, kPlayMostSeconds);
}

}  // namespace dlsys::gui
