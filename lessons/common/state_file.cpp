#include "lessons/common/state_file.h"

#include <fmt/format.h>

#include <cstdint>
#include <nlohmann/json.hpp>

#include "engine/errors.h"
#include "engine/file_io.h"
#include "engine/json_io.h"
#include "lessons/registry.h"

namespace dlsys {

void save_state_file(const std::string& path, const std::string& lesson_id, int step, const ParamValues& params) {
  nlohmann::ordered_json json;
  json["lesson"] = lesson_id;
  json["step"] = step + 1;
  json["params"] = nlohmann::ordered_json::object();
  for (const auto& [key, value] : params.all()) json["params"][key] = value.text;
  // Paths that are not UTF-8 are written with replacement characters rather than refused mid-write.
  write_file_checked(path, dump_json_text(json, 2) + "\n");
}

LessonState parse_state_text(std::string_view text, const std::string& origin, BackendKind backend) {
  const nlohmann::json json = parse_json_input(text, origin);
  if (!json.is_object() || !json.contains("lesson") || !json["lesson"].is_string())
    throw BadInput(fmt::format("{} has no \"lesson\" string; expected {{\"lesson\", \"step\", \"params\"}}", origin));
  const std::string lesson_id = json["lesson"].get<std::string>();  // named: GCC 13 warns on a temporary here
  const Lesson& lesson = find_lesson(lesson_id);
  ParamValues params = ParamValues::defaults(lesson.params());
  if (json.contains("params")) {
    if (!json["params"].is_object()) throw BadInput(fmt::format("{}: \"params\" must be an object", origin));
    for (const auto& [key, value] : json["params"].items()) {
      if (!value.is_string() && !value.is_number() && !value.is_boolean())
        throw BadInput(fmt::format("{}: key \"params\".\"{}\" must be a string or a number, got {}", origin,
                                   clip_for_message(key), describe_json_value(value)));
      try {
        params.set(lesson.params(), key, value.is_string() ? value.get<std::string>() : value.dump());
      } catch (const BadInput& e) {
        // The message must point into the file, not at a --set the user never typed.
        throw BadInput(fmt::format("{}: key \"params\".\"{}\": {}", origin, clip_for_message(key), e.what()));
      }
    }
  }
  try {
    // A lesson with no CUDA implementation is checked as the CPU will run it.
    lesson.validate(params, lesson.runs_on_cuda() ? backend : BackendKind::Cpu);
  } catch (const BadInput& e) {
    throw BadInput(fmt::format("{}: {}", origin, e.what()));
  }
  std::int64_t step = 1;
  if (json.contains("step")) {
    // Read as 64 bits and range-checked here: 4294967297 must not wrap round to step 1.
    if (!json["step"].is_number_integer() ||
        (json["step"].is_number_unsigned() && json["step"].get<std::uint64_t>() > std::uint64_t(INT64_MAX)))
      throw BadInput(fmt::format("{}: \"step\" must be a whole number from 1 to {}, got {}", origin,
                                 lesson.step_count(), describe_json_value(json["step"])));
    step = json["step"].get<std::int64_t>();
  }
  if (step < 1 || step > static_cast<std::int64_t>(lesson.step_count()))
    throw BadInput(fmt::format("{}: step {} is out of range; lesson '{}' has steps 1 to {}", origin, step, lesson.id(),
                               lesson.step_count()));
  return LessonState{&lesson, static_cast<int>(step - 1), std::move(params)};
}

LessonState read_state_file(const std::string& path, BackendKind backend) {
  return parse_state_text(read_input_file(path, "state file"), fmt::format("state file '{}'", path_for_message(path)),
                          backend);
}

}  // namespace dlsys
