#include "lessons/common/lesson_text.h"

#include <sstream>
#include <stdexcept>
#include <utility>

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

// "## Step warmup: Warm-up" -> {"warmup", "Warm-up"} (`kind`: "Step" or "Exercise")
std::pair<std::string, std::string> parse_header(const std::string& line, std::string_view kind) {
  const std::string_view rest = std::string_view(line).substr(3 + kind.size());
  const std::size_t colon = rest.find(": ");
  const std::string_view id = colon == std::string_view::npos || rest.empty() || rest[0] != ' '
                                  ? std::string_view()
                                  : rest.substr(1, colon - 1);
  if (!is_step_id(id))
    throw std::invalid_argument("lesson text: '" + line + "' is not of the form '## " + std::string(kind) +
                                " <id>: <title>' (id: a-z, 0-9, _)");
  return {std::string(id), std::string(rest.substr(colon + 2))};
}

// "Tolerance: 5%" -> 0.05
double parse_tolerance(const std::string& line, const std::string& value) {
  std::size_t used = 0;
  double percent = -1;
  try {
    percent = std::stod(value, &used);
  } catch (const std::exception&) {
  }
  if (percent < 0 || value.substr(used) != "%")
    throw std::invalid_argument("lesson text: '" + line + "': a tolerance is a percentage, as in 'Tolerance: 5%'");
  return percent / 100;
}

// One "Key: value" line of an exercise; false when the line is not one (then it belongs to the question).
bool parse_exercise_line(const std::string& line, LessonExercise& exercise) {
  const std::size_t colon = line.find(": ");
  if (colon == std::string::npos) return false;
  const std::string key = line.substr(0, colon), value = line.substr(colon + 2);
  if (key == "Answer") {
    exercise.answer = value;
  } else if (key == "Measured") {
    exercise.measured = value;
  } else if (key == "Unit") {
    exercise.unit = value;
  } else if (key == "Tolerance") {
    exercise.tolerance = parse_tolerance(line, value);
  } else if (key == "Why") {
    exercise.why = value;
  } else if (key == "Choices") {
    std::istringstream names(value);
    for (std::string choice; std::getline(names, choice, '|');) {
      choice.erase(0, choice.find_first_not_of(' '));
      choice.erase(choice.find_last_not_of(' ') + 1);
      exercise.choices.push_back(choice);
    }
  } else {
    return false;
  }
  return true;
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
      auto [id, title] = parse_header(line, "Step");
      text.steps.push_back({std::move(id), std::move(title), "", {}});
      body = &text.steps.back().caption;
    } else if (line.rfind("## Exercise", 0) == 0) {
      auto [id, title] = parse_header(line, "Exercise");
      text.exercises.push_back({.id = std::move(id), .title = std::move(title)});
      body = &text.exercises.back().question;
    } else if (!text.exercises.empty() && parse_exercise_line(line, text.exercises.back())) {
      continue;
    } else if (!text.steps.empty() && line.rfind(kUsesPrefix, 0) == 0) {
      text.steps.back().uses = parse_uses_line(line);
    } else {
      if (body->empty() && line.empty()) continue;
      *body += line + "\n";
    }
  }
  trim_trailing_blank_lines(text.theory);
  for (auto& step : text.steps) trim_trailing_blank_lines(step.caption);
  for (auto& exercise : text.exercises) {
    trim_trailing_blank_lines(exercise.question);
    if (exercise.answer.empty())
      throw std::invalid_argument("lesson text: exercise '" + exercise.id + "' has no 'Answer: <formula>' line");
  }
  return text;
}

LessonText load_lesson_text(const std::string& lesson_id) {
  return parse_lesson_text(asset("lessons/" + lesson_id + ".md"));
}

}  // namespace dlsys
