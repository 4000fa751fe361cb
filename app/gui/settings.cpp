#include "app/gui/settings.h"

#include <fmt/format.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <utility>

#include "app/gui/run_compare.h"
#include "engine/backend.h"
#include "engine/best_ceilings.h"
#include "engine/errors.h"
#include "lessons/common/state_file.h"
#include "lessons/registry.h"
#include "lessons/run_file.h"

namespace dlsys::gui {

namespace {
std::string ensure_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  return dir.string();
}
std::filesystem::path home() {
  const char* h = std::getenv("HOME");
  return h ? h : ".";
}
}  // namespace

std::string config_dir() { return user_config_dir(); }

std::string output_dir() {
  const char* out = std::getenv("DLSYS_LAB_OUT");
  return ensure_dir(out && *out ? std::filesystem::path(out) : home() / "dlsys-lab");
}

std::string timestamped_output_path(const std::string& stem, const std::string& ext) {
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  const std::filesystem::path folder = output_dir();
  // Two exports within one second get -2, -3, ... rather than overwrite each other.
  std::filesystem::path path = folder / fmt::format("{}-{}.{}", stem, stamp, ext);
  for (int n = 2; std::filesystem::exists(path); ++n) path = folder / fmt::format("{}-{}-{}.{}", stem, stamp, n, ext);
  return path.string();
}

void open_state_file(const std::string& path, AppState& state) {
  LessonState loaded = read_state_file(path, resolve_backend(state.backend_choice));
  const auto& lessons = all_lessons();
  for (std::size_t i = 0; i < lessons.size(); ++i)
    if (lessons[i] == loaded.lesson) state.lesson_index = static_cast<int>(i);
  LessonSession& session = state.session();
  session.params = std::move(loaded.params);
  session.edit_text.clear();
  session.param_errors.clear();
  session.step = loaded.step;
}

void open_run_file(const std::string& path, AppState& state) {
  show_recorded_run(std::make_shared<const RunResult>(read_run_file(path)), state);
}

void show_recorded_run(std::shared_ptr<const RunResult> result, AppState& state) {
  const Lesson& lesson = find_lesson(result->lesson);
  ParamValues params = recorded_params(lesson, *result);  // read_run_file checked them
  const auto& lessons = all_lessons();
  for (std::size_t i = 0; i < lessons.size(); ++i)
    if (lessons[i] == &lesson) state.lesson_index = static_cast<int>(i);
  LessonSession& session = state.session();
  session.params = std::move(params);
  session.edit_text.clear();
  session.param_errors.clear();
  session.last_error.clear();
  session.last_run_wall_s = result->backend.conditions.wall_s;
  show_result(session, std::move(result));
}

std::string last_state_path() { return config_dir() + "/last-state.json"; }

void save_last_state(const AppState& state) {
  const LessonSession& session = state.sessions[state.lesson_index];
  save_state_file(last_state_path(), all_lessons()[state.lesson_index]->id(), session.step, session.params);
}

bool open_last_state(AppState& state) {
  const std::string path = last_state_path();
  if (!std::filesystem::exists(path)) return false;
  open_state_file(path, state);
  return true;
}

}  // namespace dlsys::gui
