#pragma once
// Predict, then measure: a lesson's exercises (lesson_text.h) checked against its closed forms and, where the answer
// can be measured, against a run on this machine. Answers are formulas over the lesson's values, evaluated here
// (muParser), so the text file states each answer once and a test evaluates every one against the lesson's theory.
//
// The names a formula may use:
//   <key>             a numeric parameter (integer, real or bytes), as the lesson read it: `n`, `bytes`
//   theory.<path>     a number of the lesson's theory for those parameters: `theory.bytes_sent_per_rank`
//   measured.<path>   a number the run measured (Measured formulas only): `measured.time_us`
// A path goes through nested objects with dots and into lists with the index: `measured.sweep.0.time_us`. A true or
// false value is 1 or 0. Beside muParser's own functions (sqrt, log2, ln, min, max, abs, rint, ...): ceil and floor.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/params.h"
#include "engine/run_result.h"
#include "lessons/common/lesson.h"
#include "lessons/common/lesson_text.h"

namespace dlsys {

// The values formulas are evaluated over, by name.
struct ExerciseValues {
  std::map<std::string, double> by_name;
  bool measured = false;  // whether a run's values are among them
};

// The parameters' and the theory's values for `params`; with `run` (a run of the lesson made with those
// parameters), its measured values too.
ExerciseValues exercise_values(const Lesson& lesson, const ParamValues& params, const RunResult* run = nullptr);

// Throws std::invalid_argument naming the formula and what is wrong in it (an unknown name, a syntax error) or that
// it does not give a finite number.
double evaluate_formula(const std::string& formula, const ExerciseValues& values);

// What a prediction gets back: the exact answer, whether the prediction is within the exercise's tolerance of it (a
// choice: the same choice), and this machine's number where the exercise measures one and a run was given.
struct ExerciseCheck {
  double prediction = 0;
  double answer = 0;
  bool right = false;
  std::optional<double> measured;  // none without a run, for an exercise that measures nothing, or when the run lacks
                                   // a value its formula names (another backend's run)
  std::string verdict;             // one plain sentence; with a wrong prediction, the exercise's explanation too
};

ExerciseCheck check_prediction(const LessonExercise& exercise, double prediction, const ExerciseValues& values);

// A prediction as typed: a number by the lab's rule (params.h), or for a choice exercise one of its choices. Throws
// BadInput naming the exercise and what is allowed.
double read_prediction(const LessonExercise& exercise, const std::string& text);

// The exercise of that id, or BadInput naming the ids there are.
const LessonExercise& find_exercise(const LessonText& text, const std::string& lesson_id, const std::string& id);

// The question with each parameter it names in backquotes followed by its value: "over `n` ranks" -> "over n = 4
// ranks".
std::string question_with_values(const LessonExercise& exercise, const ParamValues& params);

// A number with the exercise's unit, as the answer is shown ("1.5 MiB", "12.5 us", "0.2"); a choice by its name.
std::string format_answer(const LessonExercise& exercise, double value);

}  // namespace dlsys
