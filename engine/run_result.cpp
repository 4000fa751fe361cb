#include "engine/run_result.h"

#include <fmt/format.h>

#include "engine/errors.h"

namespace dlsys {

using json = nlohmann::ordered_json;

namespace {
json values_json(const std::shared_ptr<const LessonValues>& values) {
  return values ? values->to_json() : json::object();
}
}  // namespace

const Series* RunResult::find_series(const std::string& id) const {
  for (const auto& s : series)
    if (s.id == id) return &s;
  return nullptr;
}

json to_json(const RunResult& r) {
  json out;
  out["lesson"] = r.lesson;
  const RunConditions& c = r.backend.conditions;
  out["backend"] = {{"kind", r.backend.kind},
                    {"device", r.backend.device},
                    {"emulated", r.backend.emulated},
                    {"timer", r.backend.timer},
                    {"repeats", r.backend.repeats},
                    {"notes", r.backend.notes},
                    {"wall_s", c.wall_s},
                    {"own_cpu_cores", c.own_cpu_cores},
                    {"other_busy_cores", c.other_busy_cores},
                    {"load_average", c.load_average},
                    {"disturbed", c.disturbed()}};
  out["params"] = json::object();
  for (const auto& [key, value] : r.params) out["params"][key] = value;
  out["theory"] = values_json(r.theory);
  out["measured"] = values_json(r.measured);
  out["series"] = json::array();
  for (const auto& s : r.series) {
    json points = json::array();
    for (const auto& p : s.points) points.push_back({p.x, p.y, p.y_min, p.y_max});
    out["series"].push_back({{"id", s.id},
                             {"name", s.name},
                             {"role", s.role},
                             {"x_label", s.x_label},
                             {"x_unit", s.x_unit},
                             {"y_label", s.y_label},
                             {"y_unit", s.y_unit},
                             {"points", points}});
  }
  out["timeline"] = json::array();
  for (const auto& t : r.timelines) {
    json spans = json::array();
    for (const auto& s : t.spans)
      spans.push_back({{"lane", s.lane},
                       {"start", s.start},
                       {"end", s.end},
                       {"kind", s.kind},
                       {"micro_batch", s.micro_batch},
                       {"chunk", s.chunk},
                       {"label", s.label},
                       {"direction", s.direction}});
    out["timeline"].push_back({{"name", t.name},
                               {"source", t.source},
                               {"mode", t.mode},
                               {"time_unit", t.time_unit},
                               {"lanes", t.lanes},
                               {"spans", spans}});
  }
  json memory = json::object();
  memory["peak_bytes"] = r.memory_peak_bytes;
  memory["by_tag"] = json::array();
  for (const auto& e : r.memory)
    memory["by_tag"].push_back({{"tag", e.tag}, {"current_bytes", e.current_bytes}, {"peak_bytes", e.peak_bytes}});
  out["memory"] = memory;
  return out;
}

RunResult run_result_from_json(const json& in) {
  try {
    RunResult r;
    r.lesson = in.at("lesson").get<std::string>();
    const auto& b = in.at("backend");
    r.backend.kind = b.at("kind").get<std::string>();
    r.backend.device = b.at("device").get<std::string>();
    r.backend.emulated = b.at("emulated").get<bool>();
    r.backend.timer = b.value("timer", "steady_clock");
    r.backend.repeats = b.value("repeats", 0);
    r.backend.notes = b.value("notes", std::vector<std::string>{});
    r.backend.conditions.wall_s = b.value("wall_s", 0.0);
    r.backend.conditions.own_cpu_cores = b.value("own_cpu_cores", 0.0);
    r.backend.conditions.other_busy_cores = b.value("other_busy_cores", 0.0);
    r.backend.conditions.load_average = b.value("load_average", 0.0);
    for (const auto& [key, value] : in.at("params").items()) r.params[key] = value.get<std::string>();
    r.theory = make_values(json(in.at("theory")));
    r.measured = make_values(json(in.at("measured")));
    for (const auto& s : in.at("series")) {
      Series series{s.value("id", ""), s.at("name"),    s.at("role"),   s.at("x_label"),
                    s.at("x_unit"),    s.at("y_label"), s.at("y_unit"), {}};
      for (const auto& p : s.at("points")) series.points.push_back({p.at(0), p.at(1), p.at(2), p.at(3)});
      r.series.push_back(std::move(series));
    }
    for (const auto& t : in.at("timeline")) {
      Timeline timeline{t.at("name"), t.at("source"), t.at("mode"), t.at("time_unit"), t.at("lanes"), {}};
      for (const auto& s : t.at("spans"))
        timeline.spans.push_back({s.at("lane"), s.at("start"), s.at("end"), s.at("kind"), s.at("micro_batch"),
                                  s.at("chunk"), s.at("label"), s.value("direction", 0)});
      r.timelines.push_back(std::move(timeline));
    }
    r.memory_peak_bytes = in.at("memory").at("peak_bytes");
    for (const auto& e : in.at("memory").at("by_tag"))
      r.memory.push_back({e.at("tag"), e.at("current_bytes"), e.at("peak_bytes")});
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw BadInput(fmt::format("run result JSON is malformed: {}", e.what()));
  }
}

namespace {
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string quoted = "\"";
  for (char c : s) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}
void scalar_rows(std::string& out, const char* section, const json& object) {
  for (const auto& [key, value] : object.items()) {
    if (value.is_number())
      out += fmt::format("{},{},,{},,\n", section, csv_field(key), value.get<double>());
    else if (value.is_array()) {
      for (std::size_t i = 0; i < value.size(); ++i)
        if (value[i].is_number())
          out += fmt::format("{},{},{},{},,\n", section, csv_field(key), i, value[i].get<double>());
    } else if (value.is_string())
      out += fmt::format("{},{},,{},,\n", section, csv_field(key), csv_field(value.get<std::string>()));
  }
}
}  // namespace

std::string to_csv(const RunResult& r) {
  std::string out = "section,name,x,y,y_min,y_max\n";
  scalar_rows(out, "theory", values_json(r.theory));
  scalar_rows(out, "measured", values_json(r.measured));
  for (const auto& s : r.series)
    for (const auto& p : s.points)
      out += fmt::format("series,{},{},{},{},{}\n", csv_field(s.name), p.x, p.y, p.y_min, p.y_max);
  for (const auto& e : r.memory) out += fmt::format("memory_peak_bytes,{},,{},,\n", csv_field(e.tag), e.peak_bytes);
  return out;
}

std::vector<std::string> params_changed_since(const RunResult& result, const ParamValues& now) {
  std::vector<std::string> changed;
  for (const auto& [key, value] : now.all()) {
    const auto then = result.params.find(key);
    if (then == result.params.end())
      changed.push_back(fmt::format("{}: (none) -> {}", key, value.text));
    else if (then->second != value.text)
      changed.push_back(fmt::format("{}: {} -> {}", key, then->second, value.text));
  }
  return changed;
}

}  // namespace dlsys
