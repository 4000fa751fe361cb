#pragma once
#include <string>

namespace dlsys::gui {

// Draws a lesson's text: paragraphs wrapped to the width, "$$ " lines as formulas in a framed mono block,
// "- " lines as bullets.
void draw_lesson_markdown(const std::string& text);

}  // namespace dlsys::gui
