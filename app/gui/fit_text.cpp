#include "app/gui/fit_text.h"

#include <imgui.h>

namespace dlsys::gui {

std::string fitted_text(const std::string& text, const std::string& kept, float width) {
  const std::string line = text.substr(0, text.find('\n'));
  if (line.size() == text.size() && ImGui::CalcTextSize((line + kept).c_str()).x <= width) return line + kept;
  const std::string tail = " ..." + kept;
  const float room = width - ImGui::CalcTextSize(tail.c_str()).x;
  std::size_t lo = 0, hi = line.size();  // the longest prefix that fits lies in [lo, hi]
  while (lo < hi) {
    const std::size_t mid = (lo + hi + 1) / 2;
    if (ImGui::CalcTextSize(line.c_str(), line.c_str() + mid).x <= room)
      lo = mid;
    else
      hi = mid - 1;
  }
  while (lo > 0 && (line[lo] & 0xC0) == 0x80) --lo;  // never cut a UTF-8 character in two
  return line.substr(0, lo) + tail;
}

}  // namespace dlsys::gui
