#include "app/gui/settings.h"

#include <fmt/format.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/errors.h"
#include "engine/file_io.h"
#include "lessons/common/run_lesson.h"
#include "lessons/registry.h"

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

std::string config_dir() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  return ensure_dir((xdg && *xdg ? std::filesystem::path(xdg) : home() / ".config") / "dlsys-lab");
}

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

void save_state_file(const std::string& path, const std::string& lesson_id, int step, const ParamValues& params) {
  nlohmann::ordered_json json;
  json["lesson"] = lesson_id;
  json["step"] = step + 1;
  json["params"] = nlohmann::ordered_json::object();
  for (const auto& [key, value] : params.all()) json["params"][key] = value.text;
  // Paths that are not UTF-8 are written with replacement characters rather than refused mid-write.
  write_file_checked(path, json.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");
}

void open_state_file(const std::string& path, AppState& state) {
  std::ifstream file(path);
  if (!file) throw BadInput(fmt::format("state file '{}' cannot be read", path));
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(file);
  } catch (const nlohmann::json::parse_error& e) {
    throw BadInput(fmt::format("state file '{}' is not JSON: {}", path, e.what()));
  }
  if (!json.is_object() || !json.contains("lesson") || !json["lesson"].is_string())
    throw BadInput(
        fmt::format("state file '{}' has no \"lesson\" string; expected {{\"lesson\", \"step\", \"params\"}}", path));
  const Lesson& lesson = find_lesson(json["lesson"].get<std::string>());
  std::vector<std::string> assignments;
  if (json.contains("params")) {
    if (!json["params"].is_object()) throw BadInput(fmt::format("state file '{}': \"params\" must be an object", path));
    for (const auto& [key, value] : json["params"].items())
      assignments.push_back(key + "=" + (value.is_string() ? value.get<std::string>() : value.dump()));
  }
  const ParamValues params = parse_lesson_params(lesson, assignments, resolve_backend(state.backend_choice));
  int step = 1;
  if (json.contains("step")) {
    if (!json["step"].is_number_integer())
      throw BadInput(fmt::format("state file '{}': \"step\" must be an integer", path));
    step = json["step"].get<int>();
  }
  if (step < 1 || step > static_cast<int>(lesson.step_count()))
    throw BadInput(fmt::format("state file '{}': step {} is out of range; lesson '{}' has steps 1 to {}", path, step,
                               lesson.id(), lesson.step_count()));
  const auto& lessons = all_lessons();
  for (std::size_t i = 0; i < lessons.size(); ++i)
    if (lessons[i] == &lesson) state.lesson_index = static_cast<int>(i);
  LessonSession& session = state.session();
  session.params = params;
  session.edit_text.clear();
  session.param_errors.clear();
  session.step = step - 1;
}

}  // namespace dlsys::gui
