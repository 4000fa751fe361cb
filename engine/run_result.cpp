#include "engine/run_result.h"

#include <fmt/format.h>

#include "engine/errors.h"
#include "engine/json_io.h"
#include "engine/json_read.h"

namespace dlsys {

using json = nlohmann::ordered_json;

namespace {

// The fields of a series, a timeline and a span that stand under their own names, in the file's order; a series' id,
// a span's direction (both added later, read when present) and the arrays go apart.
DLSYS_VALUES_PART(SeriesLabels, Series, name, role, x_label, x_unit, y_label, y_unit)
DLSYS_VALUES_PART(TimelineHead, Timeline, name, source, mode, time_unit, lanes)
DLSYS_VALUES_PART(SpanFields, TimelineSpan, lane, start, end, kind, micro_batch, chunk, label)

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
                    {"window_cpu_cores", c.window_cpu_cores},
                    {"load_average", c.load_average},
                    {"disturbed", c.disturbed()},
                    {"hardware_threads", c.hardware_threads}};
  out["params"] = json::object();
  for (const auto& [key, value] : r.params) out["params"][key] = value;
  out["theory"] = values_json(r.theory);
  out["measured"] = values_json(r.measured);
  out["series"] = json::array();
  for (const auto& s : r.series) {
    json points = json::array();
    for (const auto& p : s.points) points.push_back({p.x, p.y, p.y_min, p.y_max});
    json series = {{"id", s.id}};
    SeriesLabels::write(series, s);
    series["points"] = std::move(points);
    out["series"].push_back(std::move(series));
  }
  out["timeline"] = json::array();
  for (const auto& t : r.timelines) {
    json spans = json::array();
    for (const auto& s : t.spans) {
      json span = json::object();
      SpanFields::write(span, s);
      span["direction"] = s.direction;
      spans.push_back(std::move(span));
    }
    json timeline = json::object();
    TimelineHead::write(timeline, t);
    timeline["spans"] = std::move(spans);
    out["timeline"].push_back(std::move(timeline));
  }
  json memory = json::object();
  memory["peak_bytes"] = r.memory_peak_bytes;
  memory["by_tag"] = json::array();
  for (const auto& e : r.memory)
    memory["by_tag"].push_back({{"tag", e.tag}, {"current_bytes", e.current_bytes}, {"peak_bytes", e.peak_bytes}});
  out["memory"] = memory;
  if (r.recorded)
    out["recorded"] = {{"format_version", r.recorded->format_version},
                       {"lab_version", r.recorded->lab_version},
                       {"host", r.recorded->host},
                       {"date_utc", r.recorded->date_utc}};
  return out;
}

namespace {

// Keys added after the first files were written are read when present, so older files still open.
template <class T>
void read_key_or(const json& object, const std::string& key, T& out, T fallback) {
  if (object.contains(key))
    read_key(object, key, out);
  else
    out = std::move(fallback);
}

void read_backend(const json& b, Provenance& p) {
  read_key(b, "kind", p.kind);
  if (p.kind != "cpu" && p.kind != "cuda")
    throw JsonKeyError("kind", "'" + clip_for_message(p.kind) + "' is not a backend; allowed: cpu, cuda");
  read_key(b, "device", p.device);
  read_key(b, "emulated", p.emulated);
  read_key_or(b, "timer", p.timer, std::string("steady_clock"));
  read_key_or(b, "repeats", p.repeats, 0);
  read_key_or(b, "notes", p.notes, std::vector<std::string>{});
  RunConditions& c = p.conditions;
  read_key_or(b, "wall_s", c.wall_s, 0.0);
  read_key_or(b, "own_cpu_cores", c.own_cpu_cores, 0.0);
  read_key_or(b, "other_busy_cores", c.other_busy_cores, 0.0);
  read_key_or(b, "window_cpu_cores", c.window_cpu_cores, 0.0);
  read_key_or(b, "load_average", c.load_average, 0.0);
  read_key_or(b, "hardware_threads", c.hardware_threads, 0);
}

Series read_series(const json& s) {
  Series series;
  read_key_or(s, "id", series.id, std::string());
  SeriesLabels::read(s, series);
  std::vector<std::vector<double>> points;
  read_key(s, "points", points);
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    if (p.size() != 4) throw JsonKeyError(fmt::format("points[{}]", i), "expected [x, y, y_min, y_max]");
    for (std::size_t k = 0; k < 4; ++k) check_finite(fmt::format("points[{}][{}]", i, k), p[k]);
    series.points.push_back({p[0], p[1], p[2], p[3]});
  }
  return series;
}

Timeline read_timeline(const json& t) {
  Timeline timeline;
  TimelineHead::read(t, timeline);
  json spans;
  read_key(t, "spans", spans);
  if (!spans.is_array()) throw JsonKeyError("spans", "expected an array");
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const json& s = spans[i];
    TimelineSpan span;
    try {
      SpanFields::read(s, span);
      read_key_or(s, "direction", span.direction, 0);
    } catch (const JsonKeyError& e) {
      throw e.within(fmt::format("spans[{}]", i));
    }
    timeline.spans.push_back(std::move(span));
  }
  // Times count from the start of the step; a view scales them to pixels and looks the lane up by index.
  for (std::size_t i = 0; i < timeline.spans.size(); ++i) {
    const TimelineSpan& span = timeline.spans[i];
    const std::string at = fmt::format("spans[{}]", i);
    check_index(at + ".lane", span.lane, timeline.lanes.size(), "lanes");
    check_finite(at + ".start", span.start);
    check_finite(at + ".end", span.end);
    if (!(span.start >= 0)) throw JsonKeyError(at + ".start", "is negative; allowed: 0 or more");
    if (!(span.end >= span.start)) throw JsonKeyError(at + ".end", "is before start; allowed: start or later");
  }
  return timeline;
}

// Calls `read` on each element of the array at `key`, naming the element in any error.
template <class Read>
void for_each_element(const json& in, const std::string& key, Read read) {
  json array;
  read_key(in, key, array);
  if (!array.is_array()) throw JsonKeyError(key, "expected an array");
  for (std::size_t i = 0; i < array.size(); ++i) {
    try {
      read(array[i]);
    } catch (const JsonKeyError& e) {
      throw e.within(fmt::format("{}[{}]", key, i));
    }
  }
}

}  // namespace

RunResult run_result_from_json(const json& in) {
  try {
    if (!in.is_object()) throw JsonKeyError("(top level)", "expected an object");
    RunResult r;
    read_key(in, "lesson", r.lesson);
    json backend;
    read_key(in, "backend", backend);
    try {
      read_backend(backend, r.backend);
    } catch (const JsonKeyError& e) {
      throw e.within("backend");
    }
    json params;
    read_key(in, "params", params);
    if (!params.is_object()) throw JsonKeyError("params", "expected an object");
    for (const auto& [key, value] : params.items()) read_key(params, key, r.params[key]);
    json theory, measured;
    read_key(in, "theory", theory);
    read_key(in, "measured", measured);
    r.theory = make_values(std::move(theory));
    r.measured = make_values(std::move(measured));
    for_each_element(in, "series", [&](const json& s) { r.series.push_back(read_series(s)); });
    for_each_element(in, "timeline", [&](const json& t) { r.timelines.push_back(read_timeline(t)); });
    json memory;
    read_key(in, "memory", memory);
    try {
      read_key(memory, "peak_bytes", r.memory_peak_bytes);
      for_each_element(memory, "by_tag", [&](const json& e) {
        LedgerEntry entry;
        read_key(e, "tag", entry.tag);
        read_key(e, "current_bytes", entry.current_bytes);
        read_key(e, "peak_bytes", entry.peak_bytes);
        r.memory.push_back(std::move(entry));
      });
    } catch (const JsonKeyError& e) {
      throw e.within("memory");
    }
    if (in.contains("recorded")) {
      json recorded;
      read_key(in, "recorded", recorded);
      RunRecord record;
      try {
        read_key(recorded, "format_version", record.format_version);
        read_key(recorded, "lab_version", record.lab_version);
        read_key(recorded, "host", record.host);
        read_key(recorded, "date_utc", record.date_utc);
      } catch (const JsonKeyError& e) {
        throw e.within("recorded");
      }
      r.recorded = record;
    }
    return r;
  } catch (const JsonKeyError& e) {
    throw BadInput(fmt::format("run result JSON is malformed at {}", e.what()));
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
