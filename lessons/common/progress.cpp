#include "lessons/common/progress.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <filesystem>

#include "engine/errors.h"
#include "engine/file_io.h"
#include "engine/json_io.h"

namespace dlsys {

namespace {

void add_one(int& count) {
  if (count < INT_MAX) ++count;
}

// `"lessons"."matmul"."runs_finished"` for messages; keys clipped so a 10,000-character key does not flood them.
std::string key_path(std::initializer_list<std::string> keys) {
  std::string path;
  for (const std::string& key : keys) path += (path.empty() ? "\"" : ".\"") + clip_for_message(key) + "\"";
  return path;
}

const nlohmann::json& object_at(const nlohmann::json& json, const std::string& origin, const std::string& path) {
  if (!json.is_object())
    throw BadInput(fmt::format("{}: key {} must be an object, got {}", origin, path, describe_json_value(json)));
  return json;
}

int count_at(const nlohmann::json& json, const std::string& origin, const std::string& path) {
  const bool whole = json.is_number_integer() && !(json.is_number_unsigned() && json.get<std::uint64_t>() > INT_MAX);
  if (!whole || json.get<std::int64_t>() < 0 || json.get<std::int64_t>() > INT_MAX)
    throw BadInput(fmt::format("{}: key {} must be a whole number from 0 to {}, got {}", origin, path, INT_MAX,
                               describe_json_value(json)));
  return static_cast<int>(json.get<std::int64_t>());
}

void refuse_unknown_keys(const nlohmann::json& json, std::initializer_list<const char*> allowed,
                         const std::string& origin, const std::string& path) {
  for (const auto& item : json.items()) {
    const std::string& key = item.key();  // a plain reference: a lambda cannot capture a structured binding in C++17
    if (std::none_of(allowed.begin(), allowed.end(), [&](const char* name) { return key == name; })) {
      std::string names;
      for (const char* name : allowed) names += (names.empty() ? "\"" : ", \"") + std::string(name) + "\"";
      throw BadInput(fmt::format("{}: unknown key {}{}\"{}\"; allowed there: {}", origin, path, path.empty() ? "" : ".",
                                 clip_for_message(key), names));
    }
  }
}

LessonProgress lesson_from_json(const nlohmann::json& json, const std::string& origin, const std::string& id) {
  const std::string at = key_path({"lessons", id});
  object_at(json, origin, at);
  refuse_unknown_keys(json, {"steps_visited", "runs_finished", "exercises"}, origin, at);
  LessonProgress lesson;
  if (json.contains("steps_visited")) {
    const nlohmann::json& steps = json["steps_visited"];
    const std::string steps_at = key_path({"lessons", id, "steps_visited"});
    if (!steps.is_array())
      throw BadInput(
          fmt::format("{}: key {} must be an array of step ids, got {}", origin, steps_at, describe_json_value(steps)));
    for (std::size_t i = 0; i < steps.size(); ++i) {
      if (!steps[i].is_string())
        throw BadInput(fmt::format("{}: key {}[{}] must be a step id (a string), got {}", origin, steps_at, i,
                                   describe_json_value(steps[i])));
      lesson.steps_visited.insert(steps[i].get<std::string>());
    }
  }
  if (json.contains("runs_finished")) {
    const std::string runs_at = key_path({"lessons", id, "runs_finished"});
    for (const auto& [backend, count] : object_at(json["runs_finished"], origin, runs_at).items())
      lesson.runs_finished[backend] = count_at(count, origin, key_path({"lessons", id, "runs_finished", backend}));
  }
  if (json.contains("exercises")) {
    const std::string exercises_at = key_path({"lessons", id, "exercises"});
    for (const auto& [exercise, answers] : object_at(json["exercises"], origin, exercises_at).items()) {
      const std::string answers_at = key_path({"lessons", id, "exercises", exercise});
      refuse_unknown_keys(object_at(answers, origin, answers_at), {"right", "wrong"}, origin, answers_at);
      ExerciseAnswers& entry = lesson.exercises[exercise];
      if (answers.contains("right"))
        entry.right = count_at(answers["right"], origin, key_path({"lessons", id, "exercises", exercise, "right"}));
      if (answers.contains("wrong"))
        entry.wrong = count_at(answers["wrong"], origin, key_path({"lessons", id, "exercises", exercise, "wrong"}));
    }
  }
  return lesson;
}

}  // namespace

void record_step_visit(StudentProgress& progress, const std::string& lesson_id, const std::string& step_id) {
  if (progress.lessons[lesson_id].steps_visited.insert(step_id).second) ++progress.revision;
}

void record_finished_run(StudentProgress& progress, const std::string& lesson_id, const std::string& backend_kind) {
  add_one(progress.lessons[lesson_id].runs_finished[backend_kind]);
  ++progress.revision;
}

void record_exercise_answer(StudentProgress& progress, const std::string& lesson_id, const std::string& exercise_id,
                            bool right) {
  ExerciseAnswers& answers = progress.lessons[lesson_id].exercises[exercise_id];
  add_one(right ? answers.right : answers.wrong);
  ++progress.revision;
}

const ExerciseAnswers* find_exercise_answers(const StudentProgress& progress, const std::string& lesson_id,
                                             const std::string& exercise_id) {
  const auto lesson = progress.lessons.find(lesson_id);
  if (lesson == progress.lessons.end()) return nullptr;
  const auto answers = lesson->second.exercises.find(exercise_id);
  return answers == lesson->second.exercises.end() ? nullptr : &answers->second;
}

void clear_progress(StudentProgress& progress) {
  progress.lessons.clear();
  ++progress.revision;
}

StudentProgress progress_since(const StudentProgress& now, const StudentProgress& before) {
  StudentProgress added;
  for (const auto& [id, lesson] : now.lessons) {
    const auto old = before.lessons.find(id);
    const LessonProgress empty;
    const LessonProgress& then = old == before.lessons.end() ? empty : old->second;
    LessonProgress& delta = added.lessons[id];
    for (const std::string& step : lesson.steps_visited)
      if (!then.steps_visited.count(step)) delta.steps_visited.insert(step);
    for (const auto& [backend, count] : lesson.runs_finished) {
      const auto was = then.runs_finished.find(backend);
      const int more = count - (was == then.runs_finished.end() ? 0 : was->second);
      if (more > 0) delta.runs_finished[backend] = more;
    }
    for (const auto& [exercise, answers] : lesson.exercises) {
      const auto was = then.exercises.find(exercise);
      const ExerciseAnswers old_answers = was == then.exercises.end() ? ExerciseAnswers{} : was->second;
      const ExerciseAnswers more{std::max(0, answers.right - old_answers.right),
                                 std::max(0, answers.wrong - old_answers.wrong)};
      if (more.right > 0 || more.wrong > 0) delta.exercises[exercise] = more;
    }
    if (delta.steps_visited.empty() && delta.runs_finished.empty() && delta.exercises.empty()) added.lessons.erase(id);
  }
  return added;
}

void add_progress(StudentProgress& into, const StudentProgress& more) {
  const auto add = [](int& count, int extra) {
    count = static_cast<int>(std::min<std::int64_t>(INT_MAX, std::int64_t{count} + extra));
  };
  for (const auto& [id, lesson] : more.lessons) {
    LessonProgress& target = into.lessons[id];
    target.steps_visited.insert(lesson.steps_visited.begin(), lesson.steps_visited.end());
    for (const auto& [backend, count] : lesson.runs_finished) add(target.runs_finished[backend], count);
    for (const auto& [exercise, answers] : lesson.exercises) {
      add(target.exercises[exercise].right, answers.right);
      add(target.exercises[exercise].wrong, answers.wrong);
    }
  }
  ++into.revision;
}

LessonProgressSummary summarize_progress(const StudentProgress& progress, const std::string& lesson_id,
                                         const std::vector<std::string>& step_ids,
                                         const std::vector<std::string>& exercise_ids) {
  LessonProgressSummary summary;
  summary.step_count = static_cast<int>(step_ids.size());
  summary.exercise_count = static_cast<int>(exercise_ids.size());
  const auto found = progress.lessons.find(lesson_id);
  if (found == progress.lessons.end()) return summary;
  const LessonProgress& lesson = found->second;
  for (const std::string& id : step_ids) summary.steps_visited += lesson.steps_visited.count(id) ? 1 : 0;
  for (const auto& [backend, count] : lesson.runs_finished)
    summary.runs_finished =
        static_cast<int>(std::min<std::int64_t>(INT_MAX, std::int64_t{summary.runs_finished} + count));
  for (const auto& [exercise, answers] : lesson.exercises) {
    // An exercise this build no longer has is kept in the file but not counted, as steps are.
    if (answers.right + std::int64_t{answers.wrong} == 0 ||
        std::find(exercise_ids.begin(), exercise_ids.end(), exercise) == exercise_ids.end())
      continue;
    ++summary.exercises_answered;
    summary.exercises_right += answers.right > 0 ? 1 : 0;
    summary.answers_right =
        static_cast<int>(std::min<std::int64_t>(INT_MAX, std::int64_t{summary.answers_right} + answers.right));
    summary.answers_wrong =
        static_cast<int>(std::min<std::int64_t>(INT_MAX, std::int64_t{summary.answers_wrong} + answers.wrong));
  }
  return summary;
}

std::string progress_line(const LessonProgressSummary& summary) {
  std::string line = fmt::format("{}/{} steps, {} run{}", summary.steps_visited, summary.step_count,
                                 summary.runs_finished, summary.runs_finished == 1 ? "" : "s");
  if (summary.exercises_answered > 0)
    line += fmt::format(", {}/{} exercises right", summary.exercises_right, summary.exercise_count);
  return line;
}

std::string progress_details(const StudentProgress& progress, const std::string& lesson_id,
                             const LessonProgressSummary& summary) {
  std::string text = fmt::format("Steps seen: {} of {}", summary.steps_visited, summary.step_count);
  std::string runs;
  const auto found = progress.lessons.find(lesson_id);
  if (found != progress.lessons.end())
    for (const auto& [backend, count] : found->second.runs_finished)
      runs += fmt::format("{}{} on {}", runs.empty() ? "" : ", ", count, backend);
  text += "\nRuns finished: " + (runs.empty() ? std::string("none yet") : runs);
  if (summary.exercises_answered > 0)
    text += fmt::format("\nExercises: {} of {} answered right at least once, {} answered ({} answers right, {} wrong)",
                        summary.exercises_right, summary.exercise_count, summary.exercises_answered,
                        summary.answers_right, summary.answers_wrong);
  if (summary.complete()) text += "\nDone: every step seen and a run finished.";
  return text;
}

nlohmann::ordered_json progress_to_json(const StudentProgress& progress) {
  nlohmann::ordered_json lessons = nlohmann::ordered_json::object();
  for (const auto& [id, lesson] : progress.lessons) {
    nlohmann::ordered_json entry = nlohmann::ordered_json::object();
    entry["steps_visited"] = lesson.steps_visited;
    entry["runs_finished"] = lesson.runs_finished;
    nlohmann::ordered_json exercises = nlohmann::ordered_json::object();
    for (const auto& [exercise, answers] : lesson.exercises)
      exercises[exercise] = {{"right", answers.right}, {"wrong", answers.wrong}};
    entry["exercises"] = exercises;
    lessons[id] = entry;
  }
  return {{"format", kProgressFormat}, {"lessons", lessons}};
}

StudentProgress progress_from_json(const nlohmann::json& json, const std::string& origin) {
  if (!json.is_object())
    throw BadInput(fmt::format("{} must be an object {{\"format\": {}, \"lessons\": {{...}}}}, got {}", origin,
                               kProgressFormat, describe_json_value(json)));
  refuse_unknown_keys(json, {"format", "lessons"}, origin, "");
  if (!json.contains("format") || json["format"] != kProgressFormat)
    throw BadInput(fmt::format("{}: key \"format\" must be {} (the progress format this build reads), got {}", origin,
                               kProgressFormat,
                               json.contains("format") ? describe_json_value(json["format"]) : "nothing"));
  StudentProgress progress;
  if (!json.contains("lessons")) return progress;
  for (const auto& [id, lesson] : object_at(json["lessons"], origin, "\"lessons\"").items())
    progress.lessons[id] = lesson_from_json(lesson, origin, id);
  return progress;
}

StudentProgress parse_progress_text(std::string_view text, const std::string& origin) {
  return progress_from_json(parse_json_input(text, origin), origin);
}

StudentProgress read_progress_file(const std::string& path) {
  std::error_code ec;
  // A link to nowhere reads as no file yet: the first save creates the file it points to.
  if (!std::filesystem::exists(path, ec)) return {};
  const std::string origin = fmt::format("progress file '{}'", path_for_message(path));
  return parse_progress_text(read_input_file(path, "progress file"), origin);
}

void save_progress_file(const std::string& path, const StudentProgress& progress) {
  write_files_checked({{path, dump_json_text(progress_to_json(progress), 2) + "\n"}});
}

}  // namespace dlsys
