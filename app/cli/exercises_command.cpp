#include "app/cli/exercises_command.h"

#include <fmt/format.h>

#include <optional>

#include "engine/errors.h"
#include "lessons/common/exercises.h"
#include "lessons/common/run_lesson.h"
#include "lessons/registry.h"
#include "lessons/run_file.h"

namespace dlsys {

namespace {

void print_exercise(const LessonExercise& exercise, const ParamValues& params, std::ostream& out) {
  out << fmt::format("[{}] {}\n{}\n", exercise.id, exercise.title, question_with_values(exercise, params));
  if (!exercise.choices.empty()) {
    out << "  choices:";
    for (const std::string& choice : exercise.choices) out << " '" << choice << "'";
    out << "\n";
  } else {
    out << fmt::format("  answer in: {}\n", exercise.unit.empty() ? "a number" : exercise.unit);
  }
  if (!exercise.measured.empty()) out << "  measured here too (--measure, or --run-file of a recorded run)\n";
}

// `measured_by`: where the measured number comes from ("this machine", "the recorded run").
void print_check(const LessonExercise& exercise, const ExerciseCheck& check, const std::string& measured_by,
                 std::ostream& out) {
  out << fmt::format("[{}] {}\n", exercise.id, exercise.title);
  out << fmt::format("  your prediction: {}\n", format_answer(exercise, check.prediction));
  out << fmt::format("  closed form:     {}\n", format_answer(exercise, check.answer));
  if (check.measured)
    out << fmt::format("  {:<18}{}\n", measured_by + ":", format_answer(exercise, *check.measured));
  else if (!exercise.measured.empty())
    out << fmt::format("  {:<18}not measured (add --measure, or --run-file with a recorded run)\n", measured_by + ":");
  out << "  " << check.verdict << "\n";
}

// "ID=VALUE" -> the exercise and the prediction.
std::pair<const LessonExercise*, double> read_answer(const LessonText& text, const std::string& lesson_id,
                                                     const std::string& assignment) {
  const std::size_t eq = assignment.find('=');
  if (eq == std::string::npos)
    throw BadInput(fmt::format("--answer '{}': expected ID=VALUE, e.g. --answer {}=42", assignment,
                               text.exercises.empty() ? "id" : text.exercises.front().id));
  const LessonExercise& exercise = find_exercise(text, lesson_id, assignment.substr(0, eq));
  return {&exercise, read_prediction(exercise, assignment.substr(eq + 1))};
}

}  // namespace

int exercises_command(const ExercisesOptions& o, std::ostream& out) {
  if (o.lesson.empty() && o.run_file.empty())
    throw BadInput("exercises: no lesson named; allowed: a lesson id (see `list`), or --run-file FILE");
  std::optional<RunResult> run;
  const Lesson* lesson = nullptr;
  ParamValues params;
  if (!o.run_file.empty()) {
    if (!o.sets.empty() || o.measure || o.quick)
      throw BadInput(
          "--run-file is not allowed with --set, --measure or --quick: the recorded run's parameters are "
          "the exercises'; allowed: --run-file alone, or --set/--quick/--measure without it");
    run = read_run_file(o.run_file);
    lesson = &find_lesson(run->lesson);
    if (!o.lesson.empty() && o.lesson != lesson->id())
      throw BadInput(fmt::format("--run-file '{}' is a run of lesson '{}', not '{}'; allowed: a run of '{}'",
                                 o.run_file, lesson->id(), o.lesson, o.lesson));
    params = recorded_params(*lesson, *run);
  } else {
    lesson = &find_lesson(o.lesson);
    const BackendKind backend = backend_for(*lesson, o.backend);
    params = parse_lesson_params(*lesson, o.sets, backend, o.quick);
    if (o.measure) {
      RunControl control([](double, const std::string&) {});
      run = run_lesson(*lesson, params, backend, control);
    }
  }
  const LessonText text = load_lesson_text(lesson->id());
  std::vector<std::pair<const LessonExercise*, double>> answers;
  for (const std::string& assignment : o.answers) answers.push_back(read_answer(text, lesson->id(), assignment));

  const ExerciseValues values = exercise_values(*lesson, params, run ? &*run : nullptr);
  if (answers.empty()) {
    out << fmt::format("{}: {} exercises. Answer one with --answer ID=VALUE.\n\n", lesson->id(), text.exercises.size());
    for (const LessonExercise& exercise : text.exercises) {
      print_exercise(exercise, params, out);
      out << "\n";
    }
  }
  const std::string measured_by = o.run_file.empty() ? "this machine" : "the recorded run";
  for (const auto& [exercise, prediction] : answers)
    print_check(*exercise, check_prediction(*exercise, prediction, values), measured_by, out);
  return 0;
}

}  // namespace dlsys
