#include <doctest/doctest.h>

#if DLSYS_HAVE_GUI
#include <cstdio>
#include <filesystem>

#include "app/gui/settings.h"
#include "app/gui/shell.h"
#include "engine/errors.h"
#include "lessons/registry.h"

using namespace dlsys;

TEST_CASE("a saved lesson state opens again with the same lesson, step and parameters") {
  const std::string path = (std::filesystem::temp_directory_path() / "dlsys-state-test.json").string();
  const Lesson& lesson = find_lesson("matmul");
  const ParamValues params = ParamValues::parse(lesson.params(), {"m=33", "impl=tiled", "sizes=8,16"});
  gui::save_state_file(path, "matmul", 2, params);

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
