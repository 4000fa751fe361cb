#include "app/gui/theory_card.h"

#include <imgui.h>

#include <sstream>

#include "app/gui/theme.h"

namespace dlsys::gui {

void draw_lesson_markdown(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  const float s = ui_scale();
  ImGui::PushTextWrapPos(0.0f);
  while (std::getline(in, line)) {
    if (line.empty()) {
      ImGui::Spacing();
    } else if (line.rfind("$$ ", 0) == 0) {
      // Formulas stand out: a framed block in the mono font, so they read well from the back of a room.
      ImGui::PushFont(mono_font());
      const std::string formula = line.substr(3);
      const ImVec2 pos = ImGui::GetCursorScreenPos();
      const float width = ImGui::GetContentRegionAvail().x;
      const ImVec2 text_size = ImGui::CalcTextSize(formula.c_str(), nullptr, false, width - 16 * s);
      ImGui::GetWindowDrawList()->AddRectFilled(pos, {pos.x + width, pos.y + text_size.y + 10 * s},
                                                with_alpha(series_color(0), 0.14f), 3 * s);
      ImGui::GetWindowDrawList()->AddRectFilled(pos, {pos.x + 3 * s, pos.y + text_size.y + 10 * s}, series_color(0));
      ImGui::SetCursorScreenPos({pos.x + 10 * s, pos.y + 5 * s});
      ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width - 16 * s);
      ImGui::TextUnformatted(formula.c_str());
      ImGui::PopTextWrapPos();
      ImGui::SetCursorScreenPos({pos.x, pos.y + text_size.y + 14 * s});
      ImGui::PopFont();
    } else if (line.rfind("- ", 0) == 0) {
      ImGui::Bullet();
      ImGui::SameLine();
      ImGui::TextWrapped("%s", line.substr(2).c_str());
    } else {
      ImGui::TextWrapped("%s", line.c_str());
    }
  }
  ImGui::PopTextWrapPos();
}

}  // namespace dlsys::gui
