#include "lessons/common/lesson_text.h"

#include <sstream>

#include "engine/assets.h"

namespace dlsys {

namespace {
void trim_trailing_blank_lines(std::string& s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
}
}  // namespace

LessonText parse_lesson_text(std::string_view markdown) {
  LessonText text;
  std::istringstream in{std::string(markdown)};
  std::string line;
  std::string* body = &text.theory;
  while (std::getline(in, line)) {
    if (line.rfind("# ", 0) == 0 && text.title.empty()) {
      text.title = line.substr(2);
    } else if (line.rfind("## Step: ", 0) == 0) {
      text.steps.push_back({line.substr(9), ""});
      body = &text.steps.back().caption;
    } else {
      if (body->empty() && line.empty()) continue;
      *body += line + "\n";
    }
  }
  trim_trailing_blank_lines(text.theory);
  for (auto& step : text.steps) trim_trailing_blank_lines(step.caption);
  return text;
}

LessonText load_lesson_text(const std::string& lesson_id) {
  return parse_lesson_text(asset("lessons/" + lesson_id + ".md"));
}

}  // namespace dlsys
