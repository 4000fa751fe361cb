#include "lessons/common/lesson_text.h"

#include <sstream>
#include <stdexcept>

#include "engine/assets.h"

namespace dlsys {

namespace {
constexpr const char* kUsesPrefix = "Uses: ";

void trim_trailing_blank_lines(std::string& s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
}
bool is_step_id(std::string_view id) {
  if (id.empty()) return false;
  for (char c : id)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

// "## Step warmup: Warm-up" -> {"warmup", "Warm-up"}
LessonStep parse_step_header(const std::string& line) {
  const std::string_view rest = std::string_view(line).substr(std::string_view("## Step").size());
  const std::size_t colon = rest.find(": ");
  const std::string_view id = colon == std::string_view::npos || rest.empty() || rest[0] != ' '
                                  ? std::string_view()
                                  : rest.substr(1, colon - 1);
  if (!is_step_id(id))
    throw std::invalid_argument("lesson text: '" + line +
                                "' is not of the form '## Step <id>: <title>' (id: a-z, 0-9, _)");
  return {std::string(id), std::string(rest.substr(colon + 2)), "", {}};
}

// "Uses: p, m, schedule" -> {"p", "m", "schedule"}; a name that is not a parameter key is refused with the line.
std::vector<std::string> parse_uses_line(const std::string& line) {
  std::vector<std::string> keys;
  std::istringstream names(line.substr(std::string_view(kUsesPrefix).size()));
  std::string key;
  while (std::getline(names, key, ',')) {
    key.erase(0, key.find_first_not_of(' '));
    key.erase(key.find_last_not_of(' ') + 1);
    if (!is_step_id(key))
      throw std::invalid_argument("lesson text: '" + line + "' names '" + key +
                                  "', not a parameter key (a-z, 0-9, _), in 'Uses: key, key, ...'");
    keys.push_back(key);
  }
  return keys;
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
    } else if (line.rfind("## Step", 0) == 0) {
      text.steps.push_back(parse_step_header(line));
      body = &text.steps.back().caption;
    } else if (!text.steps.empty() && line.rfind(kUsesPrefix, 0) == 0) {
      text.steps.back().uses = parse_uses_line(line);
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
