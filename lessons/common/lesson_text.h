#pragma once
// A lesson's words live in assets/lessons/<id>.md: "# Title", the theory card, then "## Step <id>: title" sections
// whose body is the step's caption. The step id is what the views are keyed by, so a step and its view cannot drift
// apart when steps are added or reordered. Lines starting with "$$ " are formulas; "- " starts a bullet. A line
// "Uses: p, m, schedule" in a step's section names the parameters that step is about (the panel lists them first).
#include <string>
#include <string_view>
#include <vector>

namespace dlsys {

struct LessonStep {
  std::string id;  // "warmup": lower case, digits and underscores
  std::string title;
  std::string caption;
  std::vector<std::string> uses;  // parameter keys from its "Uses:" line; empty: the step names none
};

struct LessonText {
  std::string title;
  std::string theory;  // the card: paragraphs, formulas, bullets
  std::vector<LessonStep> steps;
};

// Throws std::invalid_argument naming the line when a step header has no id or a malformed one.
LessonText parse_lesson_text(std::string_view markdown);
// The parsed text of assets/lessons/<id>.md.
LessonText load_lesson_text(const std::string& lesson_id);

}  // namespace dlsys
