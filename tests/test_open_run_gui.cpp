// The GUI's side of a recorded run: opening one selects its lesson, puts its parameters in the panel (so the "made
// with other parameters" rule works as for a live run) and shows it as the result with its label; a bad file chosen
// from the menu leaves a message and the window as it was.
#include <doctest/doctest.h>

#if DLSYS_HAVE_GUI
#include <cstdio>
#include <filesystem>

#include "app/gui/settings.h"
#include "app/gui/shell.h"
#include "app/gui/shell_parts.h"
#include "engine/errors.h"
#include "engine/file_io.h"
#include "engine/json_io.h"
#include "lessons/common/run_lesson.h"
#include "lessons/registry.h"

using namespace dlsys;

namespace {

std::string write_quick_run(const std::string& lesson_id, const std::string& name) {
  const Lesson& lesson = find_lesson(lesson_id);
  RunControl control;
  const RunResult run =
      run_lesson(lesson, parse_lesson_params(lesson, {}, BackendKind::Cpu, true), BackendKind::Cpu, control);
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  write_file_checked(path, dump_json_text(to_json(run), 2));
  return path;
}

}  // namespace

TEST_CASE("a recorded run opens as the lesson's result, with its parameters in the panel and its label") {
  const std::string path = write_quick_run("zero", "dlsys-open-run-test.json");
  gui::AppState state;
  gui::init_sessions(state);
  gui::open_run_file(path, state);
  REQUIRE(all_lessons()[state.lesson_index]->id() == "zero");
  const gui::LessonSession& session = state.session();
  REQUIRE(session.result != nullptr);
  CHECK(session.result->opened_from == path);
  CHECK(session.result->measured != nullptr);
  CHECK(params_changed_since(*session.result, session.params).empty());
  const std::string label = gui::recorded_run_label(*session.result);
  CHECK(label.find("Recorded run: cpu on ") == 0);
  CHECK(label.find("dlsys-lab " + std::string(lab_version())) != std::string::npos);
  CHECK(label.find(" UTC") != std::string::npos);
  // A parameter changed in the panel marks the recorded result as made with other parameters.
  state.session().params.set(find_lesson("zero").params(), "steps", "7");
  CHECK_FALSE(params_changed_since(*state.session().result, state.session().params).empty());
  std::remove(path.c_str());
}

TEST_CASE("a bad run file chosen in the window leaves a message and the lesson as it was") {
  gui::AppState state;
  gui::init_sessions(state);
  const int before = state.lesson_index;
  const std::string path = (std::filesystem::temp_directory_path() / "dlsys-open-run-state.json").string();
  write_file_checked(path, R"({"lesson": "zero", "step": 1, "params": {}})");
  state.pending_run_file = path;
  gui::begin_frame(state);
  CHECK(state.lesson_index == before);
  CHECK(state.session().result == nullptr);
  CHECK(state.message_is_error);
  CHECK(state.message.find("not a recorded run") != std::string::npos);
  std::remove(path.c_str());
  CHECK_THROWS_AS(gui::open_run_file(path, state), BadInput);
}
#endif
