// A student's progress: counted exactly, kept in one file that survives a restart, a damaged file reported and replaced
// (never a crash), a reset that empties it; in the window, steps shown and runs finished are what gets counted, and the
// place the last session stopped is offered to continue from.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "engine/errors.h"
#include "engine/file_io.h"
#include "lessons/common/progress.h"
#include "lessons/registry.h"

using namespace dlsys;

namespace {

// XDG_CONFIG_HOME pointed at an empty folder of its own for one test, restored after it.
class ScopedConfigDir {
 public:
  explicit ScopedConfigDir(const std::string& name) : dir_(std::filesystem::temp_directory_path() / name) {
    std::filesystem::remove_all(dir_);
    const char* old = std::getenv("XDG_CONFIG_HOME");
    had_old_ = old != nullptr;
    old_ = old ? old : "";
    setenv("XDG_CONFIG_HOME", dir_.c_str(), 1);
  }
  ~ScopedConfigDir() {
    if (had_old_)
      setenv("XDG_CONFIG_HOME", old_.c_str(), 1);
    else
      unsetenv("XDG_CONFIG_HOME");
    std::filesystem::remove_all(dir_);
  }
  std::filesystem::path lab_dir() const { return dir_ / "dlsys-lab"; }

 private:
  std::filesystem::path dir_;
  bool had_old_ = false;
  std::string old_;
};

std::filesystem::path temp_file(const std::string& name) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / name;
  std::filesystem::remove_all(path);
  return path;
}

std::string read_text(const std::filesystem::path& path) { return read_input_file(path.string(), "test file"); }

}  // namespace

TEST_CASE("progress written and read back gives the same counts, unknown lessons included") {
  StudentProgress progress;
  record_step_visit(progress, "matmul", "naive");
  record_step_visit(progress, "matmul", "tiled");
  record_step_visit(progress, "matmul", "naive");  // seen again: still one step
  record_finished_run(progress, "matmul", "cpu");
  record_finished_run(progress, "matmul", "cpu");
  record_finished_run(progress, "matmul", "cuda");
  record_exercise_answer(progress, "matmul", "flops_of_gemm", false);
  record_exercise_answer(progress, "matmul", "flops_of_gemm", true);
  record_exercise_answer(progress, "matmul", "tile_bytes", false);
  record_step_visit(progress, "a_lesson_of_another_version", "intro");
  const std::filesystem::path path = temp_file("dlsys-progress-roundtrip.json");
  save_progress_file(path.string(), progress);
  CHECK_FALSE(std::filesystem::exists(path.string() + ".tmp"));

  const StudentProgress back = read_progress_file(path.string());
  REQUIRE(back.lessons.count("matmul") == 1);
  const LessonProgress& matmul = back.lessons.at("matmul");
  CHECK(matmul.steps_visited == std::set<std::string>{"naive", "tiled"});
  CHECK(matmul.runs_finished == std::map<std::string, int>{{"cpu", 2}, {"cuda", 1}});
  CHECK(matmul.exercises.at("flops_of_gemm").right == 1);
  CHECK(matmul.exercises.at("flops_of_gemm").wrong == 1);
  CHECK(matmul.exercises.at("tile_bytes").right == 0);
  CHECK(matmul.exercises.at("tile_bytes").wrong == 1);
  CHECK(back.lessons.count("a_lesson_of_another_version") == 1);  // kept, not dropped
  REQUIRE(find_exercise_answers(back, "matmul", "tile_bytes") != nullptr);
  CHECK(find_exercise_answers(back, "matmul", "tile_bytes")->wrong == 1);
  CHECK(find_exercise_answers(back, "matmul", "never_answered") == nullptr);
  CHECK(find_exercise_answers(back, "bubble", "tile_bytes") == nullptr);
  CHECK(progress_to_json(back) == progress_to_json(progress));

  const std::vector<std::string> exercises{"flops_of_gemm", "tile_bytes", "doubling"};
  const LessonProgressSummary summary =
      summarize_progress(back, "matmul", {"intro", "naive", "tiled", "ladder"}, exercises);
  CHECK(summary.steps_visited == 2);
  CHECK(summary.step_count == 4);
  CHECK(summary.runs_finished == 3);
  CHECK(summary.exercise_count == 3);
  CHECK(summary.exercises_answered == 2);
  CHECK(summary.exercises_right == 1);
  CHECK(summary.answers_right == 1);
  CHECK(summary.answers_wrong == 2);
  CHECK_FALSE(summary.complete());
  // Right of all the lesson's exercises, not of those answered.
  CHECK(progress_line(summary) == "2/4 steps, 3 runs, 1/3 exercises right");
  CHECK(progress_details(back, "matmul", summary) ==
        "Steps seen: 2 of 4\nRuns finished: 2 on cpu, 1 on cuda\n"
        "Exercises: 1 of 3 answered right at least once, 2 answered (1 answers right, 2 wrong)");
  // An exercise this build no longer has is not counted.
  const LessonProgressSummary fewer = summarize_progress(back, "matmul", {"naive"}, {"flops_of_gemm"});
  CHECK(fewer.exercises_answered == 1);
  CHECK(progress_line(fewer) == "1/1 steps, 3 runs, 1/1 exercises right");
  CHECK(summarize_progress(back, "matmul", {"naive", "tiled"}, exercises).complete());
  CHECK_FALSE(summarize_progress(back, "bubble", {"a"}, {}).started());
  CHECK(progress_line(summarize_progress(back, "bubble", {"a", "b"}, {"x"})) == "0/2 steps, 0 runs");
  std::filesystem::remove(path);
}

TEST_CASE("no progress file yet is no progress; a damaged one is refused naming the key, never a crash") {
  const std::filesystem::path path = temp_file("dlsys-progress-damaged.json");
  CHECK(read_progress_file(path.string()).lessons.empty());
  const std::pair<const char*, const char*> cases[] = {
      {"{", "progress file"},
      {"[]", "must be an object"},
      {R"({"format": 2, "lessons": {}})", "key \"format\" must be 1"},
      {R"({"lessons": {}})", "key \"format\" must be 1"},
      {R"({"format": 1, "lessons": []})", "key \"lessons\" must be an object"},
      {R"({"format": 1, "lessons": {}, "extra": 1})", "unknown key \"extra\""},
      {R"({"format": 1, "lessons": {"matmul": {"steps_visited": "naive"}}})",
       "key \"lessons\".\"matmul\".\"steps_visited\" must be an array"},
      {R"({"format": 1, "lessons": {"matmul": {"steps_visited": [3]}}})", "\"steps_visited\"[0] must be a step id"},
      {R"({"format": 1, "lessons": {"matmul": {"runs_finished": {"cpu": -1}}}})",
       "key \"lessons\".\"matmul\".\"runs_finished\".\"cpu\" must be a whole number from 0 to 2147483647, got -1"},
      {R"({"format": 1, "lessons": {"matmul": {"runs_finished": {"cpu": 1.5}}}})", "must be a whole number"},
      {R"({"format": 1, "lessons": {"matmul": {"runs_finished": {"cpu": 99999999999}}}})", "must be a whole number"},
      {R"({"format": 1, "lessons": {"matmul": {"exercises": {"q1": {"right": "1"}}}}})",
       "\"exercises\".\"q1\".\"right\" must be a whole number"},
      {R"({"format": 1, "lessons": {"matmul": {"exercises": {"q1": {"rigth": 1}}}}})", "unknown key"},
      {R"({"format": 1, "lessons": {"matmul": 5}})", "key \"lessons\".\"matmul\" must be an object"},
  };
  for (const auto& [text, expected] : cases) {
    const char* const written = text;  // under clang CAPTURE's lambda cannot capture a structured binding
    CAPTURE(written);
    write_file_checked(path.string(), text);
    CHECK_THROWS_WITH_AS(read_progress_file(path.string()), doctest::Contains(expected), BadInput);
  }
  std::filesystem::remove(path);
  std::filesystem::create_directory(path);  // a folder where the file should be
  CHECK_THROWS_WITH_AS(read_progress_file(path.string()), doctest::Contains("folder"), BadInput);
  std::filesystem::remove_all(path);
}

TEST_CASE("a progress file is written whole or not at all, and a reset empties it") {
  StudentProgress progress;
  record_finished_run(progress, "bubble", "cpu");
  const std::filesystem::path path = temp_file("dlsys-progress-whole.json");
  save_progress_file(path.string(), progress);
  const std::string before = read_text(path);
  CHECK_THROWS_AS(save_progress_file((path / "inside-a-file.json").string(), progress), RunFailure);
  CHECK(read_text(path) == before);
  clear_progress(progress);
  save_progress_file(path.string(), progress);
  CHECK(read_progress_file(path.string()).lessons.empty());
  std::filesystem::remove(path);
}

TEST_CASE("every change raises the revision, a step seen again does not") {
  StudentProgress progress;
  record_step_visit(progress, "bubble", "a");
  const int after_first = progress.revision;
  record_step_visit(progress, "bubble", "a");
  CHECK(progress.revision == after_first);
  record_exercise_answer(progress, "bubble", "q", true);
  CHECK(progress.revision == after_first + 1);
  clear_progress(progress);
  CHECK(progress.revision == after_first + 2);
}

TEST_CASE("what was counted since a save, added to the file as it is, keeps both") {
  StudentProgress saved;
  record_step_visit(saved, "bubble", "a");
  record_finished_run(saved, "bubble", "cpu");
  record_exercise_answer(saved, "bubble", "q", false);
  StudentProgress now = saved;
  record_step_visit(now, "bubble", "a");
  record_step_visit(now, "bubble", "b");
  record_finished_run(now, "bubble", "cpu");
  record_finished_run(now, "matmul", "cuda");
  record_exercise_answer(now, "bubble", "q", true);
  const StudentProgress since = progress_since(now, saved);
  CHECK(since.lessons.at("bubble").steps_visited == std::set<std::string>{"b"});
  CHECK(since.lessons.at("bubble").runs_finished == std::map<std::string, int>{{"cpu", 1}});
  CHECK(since.lessons.at("bubble").exercises.at("q").right == 1);
  CHECK(since.lessons.at("bubble").exercises.at("q").wrong == 0);
  CHECK(since.lessons.at("matmul").runs_finished.at("cuda") == 1);
  CHECK(progress_since(now, now).lessons.empty());
  StudentProgress sum = saved;
  add_progress(sum, since);
  CHECK(progress_to_json(sum) == progress_to_json(now));
}

#if DLSYS_HAVE_GUI
#include "app/gui/settings.h"
#include "app/gui/shell.h"
#include "app/gui/shell_parts.h"
#include "lessons/common/run_lesson.h"

namespace {

int index_of(const std::string& lesson_id) {
  const auto& lessons = all_lessons();
  for (std::size_t i = 0; i < lessons.size(); ++i)
    if (lessons[i]->id() == lesson_id) return static_cast<int>(i);
  FAIL("no lesson ", lesson_id);
  return -1;
}

// As the window of a session starts: every lesson's session, and the progress read from the config folder.
void open_recording_window(gui::AppState& state) {
  gui::init_sessions(state);
  state.record_progress = true;
  gui::load_progress(state);
}

void finish_run(gui::AppState& state) {
  gui::start_run(state);
  for (;;) {  // the worker's outcome is taken by the next frame's poll
    gui::poll_worker(state);
    if (state.worker.idle()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

TEST_CASE("the window counts the steps shown and the runs finished, and the counts survive a restart") {
  const ScopedConfigDir config("dlsys-progress-gui-test");
  {
    gui::AppState state;
    open_recording_window(state);
    state.pending_lesson_index = index_of("bubble");
    gui::begin_frame(state);  // the first step is on screen
    gui::go_to_step(state, 2);
    gui::begin_frame(state);
    gui::go_to_step(state, 0);
    gui::begin_frame(state);  // seen before: still two
    const Lesson& bubble = find_lesson("bubble");
    state.session().params = parse_lesson_params(bubble, {}, BackendKind::Cpu, true);
    finish_run(state);
    REQUIRE(state.session().result != nullptr);
    record_exercise_answer(state.progress, "bubble", "gpipe_bubble", true);
    gui::save_progress_if_changed(state);
    CHECK(std::filesystem::exists(config.lab_dir() / "progress.json"));
  }
  gui::AppState restarted;
  open_recording_window(restarted);
  CHECK_FALSE(restarted.message_is_error);
  const LessonProgressSummary summary = gui::lesson_progress(restarted, find_lesson("bubble"));
  CHECK(summary.steps_visited == 2);
  CHECK(summary.step_count == static_cast<int>(find_lesson("bubble").step_count()));
  CHECK(summary.runs_finished == 1);
  CHECK(summary.exercises_answered == 1);
  CHECK(summary.exercises_right == 1);
  CHECK(summary.exercise_count == static_cast<int>(find_lesson("bubble").text().exercises.size()));
  CHECK(restarted.progress.lessons.at("bubble").runs_finished.at("cpu") == 1);
  const nlohmann::json shown = gui::progress_summary_json(restarted);
  CHECK(shown["lessons"]["bubble"]["steps_visited"] == 2);
  CHECK(shown["lessons"]["bubble"]["runs_finished"] == 1);
  CHECK(shown["lessons"].size() == 1);

  // A reset empties the file at once; the window then counts afresh.
  gui::reset_progress(restarted);
  CHECK_FALSE(restarted.message_is_error);
  CHECK(read_progress_file((config.lab_dir() / "progress.json").string()).lessons.empty());
  CHECK_FALSE(gui::lesson_progress(restarted, find_lesson("bubble")).started());
}

TEST_CASE("two windows open at once each add what they counted to the one file") {
  const ScopedConfigDir config("dlsys-progress-two-windows-test");
  gui::AppState first, second;
  open_recording_window(first);
  open_recording_window(second);
  record_finished_run(first.progress, "bubble", "cpu");
  record_finished_run(second.progress, "bubble", "cpu");
  record_exercise_answer(second.progress, "bubble", "idle_share", true);
  gui::save_progress_if_changed(first);
  gui::save_progress_if_changed(second);
  record_step_visit(first.progress, "matmul", "naive");
  gui::save_progress_if_changed(first);
  const StudentProgress file = read_progress_file((config.lab_dir() / "progress.json").string());
  CHECK(file.lessons.at("bubble").runs_finished.at("cpu") == 2);
  CHECK(file.lessons.at("bubble").exercises.at("idle_share").right == 1);
  CHECK(file.lessons.at("matmul").steps_visited == std::set<std::string>{"naive"});
  CHECK(progress_to_json(first.progress) == progress_to_json(file));  // the window shows the sum
}

TEST_CASE("a damaged progress file is reported in the status bar, kept aside and replaced on the next save") {
  const ScopedConfigDir config("dlsys-progress-damaged-gui-test");
  std::filesystem::create_directories(config.lab_dir());
  const std::filesystem::path path = config.lab_dir() / "progress.json";
  write_file_checked(path.string(),
                     "{\"format\": 1, \"lessons\": {\"bubble\": {\"runs_finished\": {\"cpu\": \"two\"}}");
  gui::AppState state;
  open_recording_window(state);
  CHECK(state.message_is_error);
  CHECK(state.message.find("progress file") != std::string::npos);
  CHECK(state.message.find(".damaged") != std::string::npos);
  CHECK(state.progress.lessons.empty());
  gui::save_progress_if_changed(state);  // nothing new yet: the damaged file stays where it is
  CHECK(read_text(path).find("two") != std::string::npos);
  gui::begin_frame(state);  // a step on screen: a change to save
  gui::save_progress_if_changed(state);
  CHECK(read_progress_file(path.string()).lessons.size() == 1);
  CHECK(read_text(path.string() + ".damaged").find("\"two\"") != std::string::npos);
}

TEST_CASE("the place the last session stopped opens on a plain launch and is offered after any other") {
  const ScopedConfigDir config("dlsys-progress-continue-test");
  gui::AppState closing;
  gui::init_sessions(closing);
  closing.lesson_index = index_of("ddp");
  closing.session().step = 3;
  gui::save_last_state(closing);

  gui::AppState plain;
  gui::init_sessions(plain);
  gui::take_up_last_state(plain, true);
  CHECK(plain.lesson_index == index_of("ddp"));
  CHECK(plain.session().step == 3);
  CHECK_FALSE(plain.continue_from.has_value());
  CHECK(plain.message.find("continued where the last session stopped: ") == 0);
  CHECK(plain.message.find(", step 4") != std::string::npos);

  gui::AppState elsewhere;
  gui::init_sessions(elsewhere);
  elsewhere.lesson_index = index_of("bubble");  // as --lesson bubble
  gui::take_up_last_state(elsewhere, false);
  REQUIRE(elsewhere.continue_from.has_value());
  gui::begin_frame(elsewhere);
  CHECK(elsewhere.continue_from.has_value());  // still elsewhere: still offered
  CHECK(gui::progress_summary_json(elsewhere)["continue_from"]["lesson"] == "ddp");
  CHECK(gui::progress_summary_json(elsewhere)["continue_from"]["step"] == 4);
  gui::continue_where_left_off(elsewhere);
  CHECK(elsewhere.lesson_index == index_of("ddp"));
  CHECK(elsewhere.session().step == 3);
  CHECK_FALSE(elsewhere.continue_from.has_value());

  // A damaged last state is a message, and nothing to continue to.
  write_file_checked(gui::last_state_path(), "{\"lesson\": \"ddp\", \"step\": 99}");
  gui::AppState damaged;
  gui::init_sessions(damaged);
  gui::take_up_last_state(damaged, false);
  CHECK_FALSE(damaged.continue_from.has_value());
  CHECK(damaged.message_is_error);
}
#endif
