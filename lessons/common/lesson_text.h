#pragma once
// A lesson's words live in assets/lessons/<id>.md: "# Title", the theory card, then "## Step <id>: title" sections
// whose body is the step's caption. The step id is what the views are keyed by, so a step and its view cannot drift
// apart when steps are added or reordered. Lines starting with "$$ " are formulas; "- " starts a bullet. A line
// "Uses: p, m, schedule" in a step's section names the parameters that step is about (the panel lists them first).
// "## Exercise <id>: title" sections come after the steps: the question, then lines "Answer: <formula>" (over the
// lesson's parameters and theory, exercises.h), optionally "Measured: <formula>" (over a run's values), "Unit: ...",
// "Tolerance: 5%" (relative; 5 % when absent), "Choices: a | b" (then the answer is the right choice's index, from 0)
// and "Why: ..." (shown after a wrong prediction).
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

struct LessonExercise {
  std::string id;  // lower case, digits and underscores, like a step id
  std::string title;
  std::string question;
  std::string answer;    // formula: the exact answer
  std::string measured;  // formula over a run's values: this machine's number (empty: nothing to measure)
  std::string unit;      // how the answer is written: "bytes", "us", "" for a pure number
  double tolerance = 0.05;
  std::vector<std::string> choices;  // empty: a number is asked for
  std::string why;
};

struct LessonText {
  std::string title;
  std::string theory;  // the card: paragraphs, formulas, bullets
  std::vector<LessonStep> steps;
  std::vector<LessonExercise> exercises;
};

// Throws std::invalid_argument naming the line when a step or exercise header has no id or a malformed one, or an
// exercise has no answer or a malformed tolerance.
LessonText parse_lesson_text(std::string_view markdown);
// The parsed text of assets/lessons/<id>.md.
LessonText load_lesson_text(const std::string& lesson_id);

}  // namespace dlsys
