#include <doctest/doctest.h>

#include <cstdio>
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
