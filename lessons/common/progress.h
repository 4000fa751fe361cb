#pragma once
// A student's progress through the lessons: the steps they have seen, the runs that finished (per backend) and how
// their answers to the exercises went. The GUI records the events and draws the counts; the data, its summary and its
// JSON file live here, below the app, so they are tested without a window.
//
// The file (progress.json in the user's config folder):
//   {"format": 1, "lessons": {"matmul": {"steps_visited": ["naive", "tiled"], "runs_finished": {"cpu": 2},
//                                        "exercises": {"q1": {"right": 1, "wrong": 2}}}}}
// Steps are kept by their id in the lesson text, so a step moved or inserted keeps its visits. Lessons this build does
// not know (another version's, a lesson renamed) are kept and written back unchanged: a student's record is never
// dropped because an older build opened it.
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace dlsys {

inline constexpr int kProgressFormat = 1;

struct ExerciseAnswers {
  int right = 0;  // answers given that were right
  int wrong = 0;
};

struct LessonProgress {
  std::set<std::string> steps_visited;               // step ids
  std::map<std::string, int> runs_finished;          // per backend kind ("cpu", "cuda")
  std::map<std::string, ExerciseAnswers> exercises;  // per exercise id
};

struct StudentProgress {
  std::map<std::string, LessonProgress> lessons;  // per lesson id
  // Rises with every change, so whoever keeps the file knows when to write it again; not stored in the file.
  int revision = 0;
};

// Each adds one event (a step seen again changes nothing). Counts stop at INT_MAX rather than wrap.
void record_step_visit(StudentProgress& progress, const std::string& lesson_id, const std::string& step_id);
void record_finished_run(StudentProgress& progress, const std::string& lesson_id, const std::string& backend_kind);
void record_exercise_answer(StudentProgress& progress, const std::string& lesson_id, const std::string& exercise_id,
                            bool right);
// The answers given to one exercise so far, or nullptr before the first (an exercise's view can show them).
const ExerciseAnswers* find_exercise_answers(const StudentProgress& progress, const std::string& lesson_id,
                                             const std::string& exercise_id);
// Forgets every lesson's progress (the revision still rises, so the emptied file is written).
void clear_progress(StudentProgress& progress);

// Two windows open at once each add their own events to the one file: a window saves what it counted since its last
// save on top of the file as it is then, rather than its whole view over the other's.
// What `now` holds beyond `before` (steps not seen then, runs and answers since); `now` grew from `before`.
StudentProgress progress_since(const StudentProgress& now, const StudentProgress& before);
// Adds `more`'s steps, runs and answers to `into`.
void add_progress(StudentProgress& into, const StudentProgress& more);

// What the lesson list shows for one lesson.
struct LessonProgressSummary {
  int steps_visited = 0;  // of the lesson's steps as this build has them
  int step_count = 0;
  int runs_finished = 0;       // on every backend
  int exercise_count = 0;      // the lesson's exercises as this build has them
  int exercises_answered = 0;  // of those, exercises with at least one answer
  int exercises_right = 0;     // of those, answered right at least once
  int answers_right = 0;       // every answer given
  int answers_wrong = 0;
  bool started() const { return steps_visited > 0 || runs_finished > 0 || exercises_answered > 0; }
  // Every step seen and a run finished.
  bool complete() const { return step_count > 0 && steps_visited == step_count && runs_finished > 0; }
};
LessonProgressSummary summarize_progress(const StudentProgress& progress, const std::string& lesson_id,
                                         const std::vector<std::string>& step_ids,
                                         const std::vector<std::string>& exercise_ids);
// One line for the lesson list: "4/7 steps, 2 runs, 3/5 exercises right" (of all the lesson's exercises; shown once
// one was answered).
std::string progress_line(const LessonProgressSummary& summary);
// The whole story for a tooltip: runs per backend, answers right and wrong.
std::string progress_details(const StudentProgress& progress, const std::string& lesson_id,
                             const LessonProgressSummary& summary);

nlohmann::ordered_json progress_to_json(const StudentProgress& progress);
// `origin` starts every message. Throws BadInput naming the key's path and what is allowed.
StudentProgress progress_from_json(const nlohmann::json& json, const std::string& origin);
// The text of a progress file. Throws BadInput (not JSON, nested too deep, or progress_from_json's reasons).
StudentProgress parse_progress_text(std::string_view text, const std::string& origin);
// The file at `path`; empty progress when there is no file yet. Throws BadInput for a file that cannot be read as
// progress (not JSON, a key of the wrong kind, another format, a folder or a FIFO in its place).
StudentProgress read_progress_file(const std::string& path);
// Writes the whole file under a temporary name and renames it into place: the file is whole or unchanged. Throws
// RunFailure naming the file and the reason.
void save_progress_file(const std::string& path, const StudentProgress& progress);

}  // namespace dlsys
