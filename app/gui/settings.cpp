#include "app/gui/settings.h"

#include <fmt/format.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <utility>

#include "app/gui/run_compare.h"
#include "app/gui/shell.h"
#include "engine/backend.h"
#include "engine/best_ceilings.h"
#include "engine/errors.h"
#include "lessons/common/progress.h"
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

namespace {
void apply_lesson_state(LessonState loaded, AppState& state) {
  const auto& lessons = all_lessons();
  for (std::size_t i = 0; i < lessons.size(); ++i)
    if (lessons[i] == loaded.lesson) state.lesson_index = static_cast<int>(i);
  LessonSession& session = state.session();
  session.params = std::move(loaded.params);
  session.edit_text.clear();
  session.param_errors.clear();
  session.step = loaded.step;
}
}  // namespace

void open_state_file(const std::string& path, AppState& state) {
  apply_lesson_state(read_state_file(path, resolve_backend(state.backend_choice)), state);
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

std::string place_label(const LessonState& place) {
  return fmt::format("{}, step {}", place.lesson->title(), place.step + 1);
}

void take_up_last_state(AppState& state, bool open_it) {
  const std::string path = last_state_path();
  if (!std::filesystem::exists(path)) return;
  try {
    LessonState place = read_state_file(path, resolve_backend(state.backend_choice));
    if (!open_it) {
      state.continue_from = std::move(place);
      return;
    }
    set_message(state, "continued where the last session stopped: " + place_label(place), false);
    apply_lesson_state(std::move(place), state);
  } catch (const BadInput& e) {  // read whole before anything is set: the window opens on the first lesson
    set_message(state, std::string("the last session could not be reopened: ") + e.what(), true);
  }
}

void continue_where_left_off(AppState& state) {
  if (!state.continue_from) return;
  const std::string label = place_label(*state.continue_from);
  apply_lesson_state(std::move(*state.continue_from), state);
  state.continue_from.reset();
  state.playing = false;
  state.session().step_started_s = state.now_s;
  set_message(state, "continued where the last session stopped: " + label, false);
}

std::string progress_path() { return config_dir() + "/progress.json"; }

void load_progress(AppState& state) {
  const std::string path = progress_path();
  try {
    state.progress = read_progress_file(path);
  } catch (const BadInput& e) {
    state.progress = StudentProgress{};
    set_message(state, std::string(e.what()) + "; progress starts afresh, the file is kept as " + path + ".damaged",
                true);
  }
  state.progress_saved = state.progress;
  state.progress_saved_revision = state.progress.revision;
}

void save_progress_if_changed(AppState& state) {
  if (state.progress.revision == state.progress_saved_revision) return;
  const std::string path = progress_path();
  // What this window counted since its last save goes on top of the file as it is now: another window's events,
  // saved meanwhile, stay. A file that cannot be read is set aside and replaced by what this window knows.
  StudentProgress merged = state.progress_saved;
  try {
    merged = read_progress_file(path);
  } catch (const BadInput&) {
    std::error_code ec;
    std::filesystem::rename(path, path + ".damaged", ec);  // a folder that cannot move fails the write below
  }
  add_progress(merged, progress_since(state.progress, state.progress_saved));
  merged.revision = state.progress.revision;
  try {
    save_progress_file(path, merged);
    state.progress = merged;
    state.progress_saved = merged;
    state.progress_save_failed = false;
  } catch (const std::exception& e) {
    if (!state.progress_save_failed) set_message(state, std::string("progress not saved: ") + e.what(), true);
    state.progress_save_failed = true;
  }
  // Tried once per change: a read-only folder is not retried every frame.
  state.progress_saved_revision = state.progress.revision;
}

void reset_progress(AppState& state) {
  clear_progress(state.progress);
  state.progress_saved_revision = state.progress.revision;
  try {
    save_progress_file(progress_path(), state.progress);
    state.progress_saved = state.progress;
    set_message(state, "progress reset: " + progress_path() + " cleared", false);
  } catch (const std::exception& e) {
    set_message(state, std::string("progress not reset: ") + e.what(), true);
  }
}

}  // namespace dlsys::gui
