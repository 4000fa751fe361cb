#include "lessons/run_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "engine/errors.h"
#include "engine/file_io.h"
#include "engine/json_io.h"
#include "lessons/registry.h"

namespace dlsys {

namespace {

using json = nlohmann::ordered_json;

// Where a file's JSON and the JSON computed here first differ; numbers agree within a relative 1e-9, since the same
// closed form computed by another machine's libm may differ in the last bits. The file may hold more keys than are
// computed: a run adds what it measured of the machine (its peaks) to the closed forms.
struct Difference {
  std::string path;
  json in_file, computed;
};

std::optional<Difference> first_difference(const json& in_file, const json& computed, const std::string& path) {
  const Difference here{path, in_file, computed};
  if (in_file.is_number() && computed.is_number()) {
    const double x = in_file.get<double>(), y = computed.get<double>();
    if (std::abs(x - y) <= 1e-9 * std::max(std::abs(x), std::abs(y))) return std::nullopt;
    return here;
  }
  if (in_file.type() != computed.type()) return here;
  if (computed.is_object()) {
    for (const auto& [key, value] : computed.items()) {
      if (!in_file.contains(key)) return Difference{path + "." + key, nullptr, value};
      if (auto at = first_difference(in_file.at(key), value, path + "." + key)) return at;
    }
    return std::nullopt;
  }
  if (computed.is_array()) {
    if (in_file.size() != computed.size()) return here;
    for (std::size_t i = 0; i < computed.size(); ++i)
      if (auto at = first_difference(in_file[i], computed[i], fmt::format("{}[{}]", path, i))) return at;
    return std::nullopt;
  }
  if (in_file == computed) return std::nullopt;
  return here;
}

bool has_file_param(const Lesson& lesson, const ParamValues& params) {
  for (const ParamSpec& spec : lesson.params())
    if (spec.type == ParamType::File && !params.text(spec.key).empty()) return true;
  return false;
}

// The views draw the step data computed from the file's parameters beside its measurements. A file whose parameters
// were changed after the run (ddp's n edited from 4 to 64) would draw 64 ranks' step data beside 4 ranks'
// measurements; its theory, computed from the parameters when the run was made, no longer follows from them.
void check_params_give_theory(const Lesson& lesson, const ParamValues& params, const json& theory) {
  json expected;
  try {
    const auto values = lesson.theory(params);
    expected = values ? values->to_json() : json::object();
  } catch (const BadInput&) {
    // A config file named by the parameters may exist only where the run was made; its theory cannot be checked here.
    if (has_file_param(lesson, params)) return;
    throw;
  }
  if (const auto d = first_difference(theory, expected, "theory"))
    throw BadInput(
        fmt::format("{} does not follow from the file's params (the file holds {}, the params give {}); the "
                    "parameters or the theory were changed after the run",
                    d->path, describe_json_value(d->in_file), describe_json_value(d->computed)));
}

}  // namespace

ParamValues recorded_params(const Lesson& lesson, const RunResult& result) {
  std::vector<std::string> assignments;
  for (const auto& [key, value] : result.params) assignments.push_back(key + "=" + value);
  // Checked against the lesson's ranges but not for this machine's backend: a run recorded on CUDA opens on a laptop
  // without one, and only a new run (which validates) needs the backend.
  return ParamValues::parse(lesson.params(), assignments);
}

std::string understood_run_format_versions() { return std::to_string(kRunFileFormatVersion); }

void read_typed_values(const Lesson& lesson, const json& theory, const json& measured, RunResult& result) {
  try {
    lesson.read_values(theory, measured, result);
  } catch (const JsonKeyError& e) {
    throw BadInput(fmt::format("lesson '{}': {}", lesson.id(), e.what()));
  }
}

RunResult run_from_json(const json& in, const std::string& origin) {
  const std::string versions = understood_run_format_versions();
  if (!in.is_object() || !in.contains("recorded"))
    throw BadInput(fmt::format(
        "{} is not a recorded run: it has no \"recorded\" object (files written by `dlsys-lab run LESSON --json "
        "FILE` or the window's \"Last run as JSON\" have one); run file format versions understood: {}",
        origin, versions));
  const json& recorded = in.at("recorded");
  if (!recorded.is_object() || !recorded.contains("format_version") ||
      !recorded.at("format_version").is_number_integer())
    throw BadInput(
        fmt::format("{}: recorded.format_version is missing or not an integer; understood: {}", origin, versions));
  const auto version = recorded.at("format_version").get<std::int64_t>();
  if (version != kRunFileFormatVersion)
    throw BadInput(
        fmt::format("{}: run file format version {} is not understood by this build (dlsys-lab {}); "
                    "understood: {}",
                    origin, version, lab_version(), versions));
  RunResult result;
  try {
    result = run_result_from_json(in);
  } catch (const BadInput& e) {
    throw BadInput(fmt::format("{}: {}", origin, e.what()));
  }
  try {
    const Lesson& lesson = find_lesson(result.lesson);
    read_typed_values(lesson, in.at("theory"), in.at("measured"), result);
    // A parameter the file does not name did not exist in the build that recorded it, which ran as its default.
    const ParamValues defaults = ParamValues::defaults(lesson.params());
    for (const auto& [key, value] : defaults.all()) result.params.emplace(key, value.text);
    check_params_give_theory(lesson, recorded_params(lesson, result), in.at("theory"));
  } catch (const BadInput& e) {
    throw BadInput(fmt::format("{}: {}", origin, e.what()));
  }
  return result;
}

RunResult read_run_file(const std::string& path) {
  const std::string origin = fmt::format("run file '{}'", path_for_message(path));
  RunResult result = run_from_json(parse_ordered_json_input(read_input_file(path, "run file"), origin), origin);
  result.opened_from = path;
  return result;
}

}  // namespace dlsys
