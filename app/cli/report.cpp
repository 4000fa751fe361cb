#include "app/cli/report.h"

#include <fmt/format.h>

#include <algorithm>

#include "engine/units.h"

namespace dlsys {

namespace {

constexpr std::size_t kLongestInlineValue = 100;

std::string value_text(const nlohmann::ordered_json& value) {
  if (value.is_number()) return format_number(value.get<double>(), 6);
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "yes" : "no";
  // A short list or record fits on its line; a long one is the lesson's own tables' business (below), or --json's.
  const std::string text = value.dump();
  if (text.size() <= kLongestInlineValue) return text;
  return value.is_array() ? fmt::format("[{} entries: see --json]", value.size())
                          : fmt::format("{{{} fields: see --json}}", value.size());
}

void section(std::string& out, const char* title, const nlohmann::ordered_json& values) {
  if (values.empty()) return;
  out += fmt::format("{}\n", title);
  std::size_t width = 0;
  for (const auto& [key, v] : values.items()) width = std::max(width, key.size());
  for (const auto& [key, v] : values.items()) out += fmt::format("  {:<{}}  {}\n", key, width, value_text(v));
}

}  // namespace

std::string format_run_report(const RunResult& r) {
  std::string out = fmt::format("lesson {} on {} ({}){}\n", r.lesson, r.backend.kind, r.backend.device,
                                r.backend.emulated ? " [emulated]" : "");
  if (r.backend.repeats > 0)
    out += fmt::format("timer {}, median of {} repeats after warm-up\n", r.backend.timer, r.backend.repeats);
  if (const std::string load = r.backend.conditions.sentence(); !load.empty())
    out += fmt::format("busy machine: {}\n", load);
  for (const auto& note : r.backend.notes) out += fmt::format("note: {}\n", note);
  if (r.theory) section(out, "theory", r.theory->to_json());
  if (r.measured) section(out, "measured", r.measured->to_json());
  for (const auto& s : r.series) {
    out += fmt::format("series {} [{}]\n  {:>14}  {:>14}  {:>14}  {:>14}\n", s.name, s.role,
                       s.x_label + (s.x_unit.empty() ? "" : " (" + s.x_unit + ")"),
                       s.y_label + (s.y_unit.empty() ? "" : " (" + s.y_unit + ")"), "min", "max");
    for (const auto& p : s.points)
      out += fmt::format("  {:>14}  {:>14}  {:>14}  {:>14}\n", format_number(p.x, 6), format_number(p.y, 5),
                         format_number(p.y_min, 5), format_number(p.y_max, 5));
  }
  if (r.memory_peak_bytes > 0) {
    out += fmt::format("memory peak {}\n", format_bytes_binary(double(r.memory_peak_bytes)));
    for (const auto& e : r.memory)
      out += fmt::format("  {:<12} peak {}\n", e.tag, format_bytes_binary(double(e.peak_bytes)));
  }
  return out;
}

}  // namespace dlsys
