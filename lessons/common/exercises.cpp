#include "lessons/common/exercises.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <muParser.h>

#include <cmath>
#include <stdexcept>

#include "engine/errors.h"
#include "engine/units.h"

namespace dlsys {

namespace {

// Every number under `json` by its dotted path from `prefix`.
void add_numbers(const nlohmann::ordered_json& json, const std::string& prefix, std::map<std::string, double>& out) {
  if (json.is_object()) {
    for (const auto& [key, value] : json.items()) add_numbers(value, prefix + "." + key, out);
  } else if (json.is_array()) {
    for (std::size_t i = 0; i < json.size(); ++i) add_numbers(json[i], prefix + "." + std::to_string(i), out);
  } else if (json.is_boolean()) {
    out[prefix] = json.get<bool>() ? 1.0 : 0.0;
  } else if (json.is_number()) {
    out[prefix] = json.get<double>();
  }
}

double ceil_of(double x) { return std::ceil(x); }
double floor_of(double x) { return std::floor(x); }

}  // namespace

ExerciseValues exercise_values(const Lesson& lesson, const ParamValues& params, const RunResult* run) {
  ExerciseValues values;
  for (const ParamSpec& spec : lesson.params())
    if (params.has(spec.key) &&
        (spec.type == ParamType::Integer || spec.type == ParamType::Real || spec.type == ParamType::Bytes))
      values.by_name[spec.key] = params.real(spec.key);
  if (const auto theory = lesson.theory(params)) add_numbers(theory->to_json(), "theory", values.by_name);
  if (run && run->measured) {
    add_numbers(run->measured->to_json(), "measured", values.by_name);
    values.measured = true;
  }
  return values;
}

double evaluate_formula(const std::string& formula, const ExerciseValues& values) {
  // muParser reads the variables through pointers: a copy of the values that lives as long as the parser.
  std::map<std::string, double> variables = values.by_name;
  double result = 0;
  try {
    mu::Parser parser;
    parser.DefineNameChars("0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.");
    parser.DefineFun("ceil", ceil_of);
    parser.DefineFun("floor", floor_of);
    for (auto& [name, value] : variables) parser.DefineVar(name, &value);
    parser.SetExpr(formula);
    result = parser.Eval();
  } catch (const mu::Parser::exception_type& e) {
    throw std::invalid_argument(fmt::format("formula '{}': {}{}", formula, e.GetMsg(),
                                            e.GetToken().empty() ? "" : fmt::format(" ('{}')", e.GetToken())));
  }
  if (!std::isfinite(result))
    throw std::invalid_argument(fmt::format("formula '{}' gives {}, not a finite number", formula, result));
  return result;
}

ExerciseCheck check_prediction(const LessonExercise& exercise, double prediction, const ExerciseValues& values) {
  ExerciseCheck check;
  check.prediction = prediction;
  check.answer = evaluate_formula(exercise.answer, values);
  if (!exercise.choices.empty()) {
    check.right = std::lround(prediction) == std::lround(check.answer);
  } else {
    const double scale = std::max(std::fabs(check.answer), 1e-300);
    check.right = std::fabs(prediction - check.answer) <= exercise.tolerance * scale;
  }
  if (!exercise.measured.empty() && values.measured) {
    // A run on another backend or at other sizes may lack a value the formula names: then nothing is shown for it.
    try {
      check.measured = evaluate_formula(exercise.measured, values);
    } catch (const std::invalid_argument&) {
      check.measured.reset();
    }
  }
  check.verdict = check.right ? fmt::format("Right: the closed form gives {}.", format_answer(exercise, check.answer))
                              : fmt::format("Not quite: the closed form gives {}, and you said {}.",
                                            format_answer(exercise, check.answer), format_answer(exercise, prediction));
  if (!check.right && exercise.choices.empty())
    check.verdict += fmt::format(" (within {} of it counts.)", format_number(exercise.tolerance * 100, 3) + " %");
  if (!check.right && !exercise.why.empty()) check.verdict += " " + exercise.why;
  return check;
}

double read_prediction(const LessonExercise& exercise, const std::string& text) {
  if (!exercise.choices.empty()) {
    for (std::size_t i = 0; i < exercise.choices.size(); ++i)
      if (exercise.choices[i] == text) return double(i);
    throw BadInput(fmt::format("exercise '{}': answer '{}' is not one of its choices; allowed: {}", exercise.id, text,
                               fmt::join(exercise.choices, ", ")));
  }
  // The rule for numbers typed anywhere in the lab; byte answers may carry a unit, as byte parameters do.
  const ParamSpec spec{.key = "answer to " + exercise.id,
                       .type = exercise.unit == "bytes" ? ParamType::Bytes : ParamType::Real,
                       .min = -1e300,
                       .max = 1e300};
  return check_param(spec, text).number;
}

const LessonExercise& find_exercise(const LessonText& text, const std::string& lesson_id, const std::string& id) {
  std::vector<std::string> ids;
  for (const LessonExercise& exercise : text.exercises) {
    if (exercise.id == id) return exercise;
    ids.push_back(exercise.id);
  }
  throw BadInput(fmt::format("lesson '{}' has no exercise '{}'; allowed: {}", lesson_id, id, fmt::join(ids, ", ")));
}

std::string question_with_values(const LessonExercise& exercise, const ParamValues& params) {
  std::string out;
  const std::string& q = exercise.question;
  for (std::size_t i = 0; i < q.size();) {
    const std::size_t open = q.find('`', i), close = open == std::string::npos ? open : q.find('`', open + 1);
    if (close == std::string::npos) {
      out += q.substr(i);
      break;
    }
    const std::string key = q.substr(open + 1, close - open - 1);
    out += q.substr(i, open - i) + (params.has(key) ? key + " = " + params.text(key) : key);
    i = close + 1;
  }
  return out;
}

std::string format_answer(const LessonExercise& exercise, double value) {
  if (!exercise.choices.empty()) {
    const long index = std::lround(value);
    return index >= 0 && index < long(exercise.choices.size()) ? exercise.choices[std::size_t(index)]
                                                               : fmt::format("choice {}", index);
  }
  if (exercise.unit == "bytes") return format_bytes_binary(value);
  if (exercise.unit == "us") return format_duration_us(value);
  return exercise.unit.empty() ? format_number(value, 6) : format_number(value, 6) + " " + exercise.unit;
}

}  // namespace dlsys
