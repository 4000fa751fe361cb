#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "engine/errors.h"
#include "lessons/common/state_file.h"
#include "lessons/registry.h"

#if DLSYS_HAVE_GUI
#include "app/gui/settings.h"
#include "app/gui/shell.h"
#endif

using namespace dlsys;

TEST_CASE("a saved lesson state reads back with the same lesson, step and parameters") {
  const std::string path = (std::filesystem::temp_directory_path() / "dlsys-state-read-test.json").string();
  const Lesson& lesson = find_lesson("matmul");
  const ParamValues params = ParamValues::parse(lesson.params(), {"m=33", "impl=tiled", "sizes=8,16"});
  save_state_file(path, "matmul", 2, params);
  const LessonState state = read_state_file(path, BackendKind::Cpu);
  CHECK(state.lesson == &lesson);
  CHECK(state.step == 2);
  CHECK(state.params.integer("m") == 33);
  CHECK(state.params.text("impl") == "tiled");
  CHECK(state.params.list("sizes") == std::vector<double>{8, 16});
  std::remove(path.c_str());
  CHECK_THROWS_AS(read_state_file(path, BackendKind::Cpu), BadInput);
}

TEST_CASE("state text that is not a state is refused with BadInput") {
  for (const char* text :
       {"", "[]", "{\"lesson\": 1}", "{\"lesson\": \"nope\"}", "{\"lesson\": \"matmul\", \"step\": 0}",
        "{\"lesson\": \"matmul\", \"step\": 4294967297}", "{\"lesson\": \"matmul\", \"params\": []}",
        "{\"lesson\": \"matmul\", \"params\": {\"m\": [1]}}"}) {
    CAPTURE(text);
    CHECK_THROWS_AS(parse_state_text(text, "state", BackendKind::Cpu), BadInput);
  }
}

#if DLSYS_HAVE_GUI
TEST_CASE("a saved lesson state opens again in the GUI with the same lesson, step and parameters") {
  const std::string path = (std::filesystem::temp_directory_path() / "dlsys-state-test.json").string();
  const Lesson& lesson = find_lesson("matmul");
  const ParamValues params = ParamValues::parse(lesson.params(), {"m=33", "impl=tiled", "sizes=8,16"});
  save_state_file(path, "matmul", 2, params);

  gui::AppState state;
  gui::init_sessions(state);
  gui::open_state_file(path, state);
  CHECK(all_lessons()[state.lesson_index]->id() == "matmul");
  CHECK(state.session().step == 2);
  CHECK(state.session().params.integer("m") == 33);
  CHECK(state.session().params.text("impl") == "tiled");
  CHECK(state.session().params.list("sizes") == std::vector<double>{8, 16});
  std::remove(path.c_str());
  CHECK_THROWS_AS(gui::open_state_file(path, state), BadInput);
}
#endif

#if DLSYS_HAVE_GUI
TEST_CASE("the window's last lesson, step and parameters open again on the next launch") {
  const std::filesystem::path config = std::filesystem::temp_directory_path() / "dlsys-last-state-test";
  std::filesystem::remove_all(config);
  const char* saved_xdg = std::getenv("XDG_CONFIG_HOME");
  const std::string restore = saved_xdg ? saved_xdg : "";
  setenv("XDG_CONFIG_HOME", config.string().c_str(), 1);

  gui::AppState fresh;
  gui::init_sessions(fresh);
  gui::take_up_last_state(fresh, true);  // nothing saved yet: the first lesson, as before, and nothing to say
  CHECK(fresh.lesson_index == 0);
  CHECK(fresh.message.empty());

  gui::AppState closing;
  gui::init_sessions(closing);
  const auto& lessons = all_lessons();
  for (std::size_t i = 0; i < lessons.size(); ++i)
    if (lessons[i]->id() == "ddp") closing.lesson_index = static_cast<int>(i);
  closing.session().step = 3;
  closing.session().params = ParamValues::parse(find_lesson("ddp").params(), {"n=8"});
  gui::save_last_state(closing);

  gui::AppState reopened;
  gui::init_sessions(reopened);
  gui::take_up_last_state(reopened, true);
  CHECK(all_lessons()[reopened.lesson_index]->id() == "ddp");
  CHECK(reopened.session().step == 3);
  CHECK(reopened.session().params.integer("n") == 8);

  // A damaged file is refused whole: nothing changes, and the status bar says why.
  std::FILE* f = std::fopen(gui::last_state_path().c_str(), "w");
  std::fputs("{\"lesson\": \"ddp\", \"step\": 99}", f);
  std::fclose(f);
  gui::AppState damaged;
  gui::init_sessions(damaged);
  gui::take_up_last_state(damaged, true);
  CHECK(damaged.message_is_error);
  CHECK(damaged.message.find("the last session could not be reopened: ") == 0);
  CHECK(damaged.lesson_index == 0);
  CHECK(damaged.session().step == 0);

  if (saved_xdg)
    setenv("XDG_CONFIG_HOME", restore.c_str(), 1);
  else
    unsetenv("XDG_CONFIG_HOME");
  std::filesystem::remove_all(config);
}
#endif
