#include "lessons/common/run_comparison.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include "engine/errors.h"
#include "engine/file_io.h"
#include "lessons/run_file.h"

namespace dlsys {

namespace {

using json = nlohmann::ordered_json;

constexpr const char* kAbsent = "-";

// A measured number as the table prints it: integers whole, reals at six significant digits.
std::string number_text(const json& value) {
  if (value.is_number_integer() || value.is_number_unsigned()) return value.dump();
  return fmt::format("{:.6g}", value.get<double>());
}

// The keys of both objects, A's order first, then those only B has.
std::vector<std::string> keys_of_both(const json& a, const json& b) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : a.items()) keys.push_back(key);
  for (const auto& [key, value] : b.items())
    if (!a.contains(key)) keys.push_back(key);
  return keys;
}

json measured_json(const RunResult& run) { return run.measured ? run.measured->to_json() : json::object(); }

// The measured struct's top-level numbers (flags, texts, nulls and nested tables are left to the views).
std::vector<ComparedValue> compare_measured(const RunResult& a, const RunResult& b) {
  const json ma = measured_json(a), mb = measured_json(b);
  const auto number_at = [](const json& object, const std::string& key) -> const json* {
    if (!object.contains(key) || !object.at(key).is_number()) return nullptr;
    return &object.at(key);
  };
  std::vector<ComparedValue> rows;
  for (const std::string& key : keys_of_both(ma, mb)) {
    const json* va = number_at(ma, key);
    const json* vb = number_at(mb, key);
    if (va == nullptr && vb == nullptr) continue;
    ComparedValue row{key, va ? number_text(*va) : kAbsent, vb ? number_text(*vb) : kAbsent, true, std::nullopt};
    if (va && vb) {
      const double x = va->get<double>(), y = vb->get<double>();
      row.differs = x != y;
      if (std::isfinite(x) && std::isfinite(y) && x != 0) row.ratio_b_over_a = y / x;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<ComparedValue> compare_params(const RunResult& a, const RunResult& b) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : a.params) keys.push_back(key);
  for (const auto& [key, value] : b.params)
    if (!a.params.count(key)) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  // Where each ran first: a laptop's CPU against an H100 explains most ratios below.
  const auto where = [](const RunResult& run) { return run.backend.kind + ": " + run.backend.device; };
  std::vector<ComparedValue> rows{{"backend", where(a), where(b), where(a) != where(b), std::nullopt}};
  for (const std::string& key : keys) {
    const auto ia = a.params.find(key), ib = b.params.find(key);
    const std::string va = ia != a.params.end() ? ia->second : kAbsent;
    const std::string vb = ib != b.params.end() ? ib->second : kAbsent;
    rows.push_back({key, va, vb, va != vb, std::nullopt});
  }
  return rows;
}

bool starts_with_benchmark(const std::string& line) {
  static const std::string word = "benchmark:";
  if (line.size() < word.size()) return false;
  for (std::size_t i = 0; i < word.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(line[i])) != word[i]) return false;
  return true;
}

// The lesson's promise as its report states it ("benchmark: ... met"), or empty when its report has none.
std::string benchmark_line(const Lesson& lesson, const RunResult& run) {
  std::istringstream report(lesson.text_report(run));
  for (std::string line; std::getline(report, line);) {
    const std::size_t start = line.find_first_not_of(' ');
    if (start != std::string::npos && starts_with_benchmark(line.substr(start))) return line.substr(start);
  }
  return {};
}

json row_json(const ComparedValue& row, bool with_ratio) {
  json out = {{"name", row.name}, {"a", row.a}, {"b", row.b}, {"differs", row.differs}};
  if (with_ratio) out["ratio_b_over_a"] = row.ratio_b_over_a ? json(*row.ratio_b_over_a) : json(nullptr);
  return out;
}

}  // namespace

std::string compared_run_name(const RunResult& run) { return run.opened_from.empty() ? "live" : run.opened_from; }

RunComparison compare_runs(const Lesson& lesson, const RunResult& a, const RunResult& b) {
  for (const RunResult* run : {&a, &b})
    if (run->lesson != lesson.id())
      throw BadInput(fmt::format("{} is a run of lesson '{}'; allowed: runs of lesson '{}' alone, the lesson compared",
                                 compared_run_name(*run), run->lesson, lesson.id()));
  RunComparison out;
  out.lesson = lesson.id();
  out.a_name = compared_run_name(a);
  out.b_name = compared_run_name(b);
  out.params = compare_params(a, b);
  out.measured = compare_measured(a, b);
  out.a_benchmark = benchmark_line(lesson, a);
  out.b_benchmark = benchmark_line(lesson, b);
  return out;
}

RunsToCompare read_runs_to_compare(const std::string& a_path, const std::string& b_path) {
  RunsToCompare runs{read_run_file(a_path), read_run_file(b_path)};
  const RunResult& a = runs.a;
  const RunResult& b = runs.b;
  if (a.lesson != b.lesson)
    throw BadInput(fmt::format(
        "run file '{}' is a run of lesson '{}', but run file '{}' is a run of lesson '{}'; allowed: two runs of the "
        "same lesson",
        path_for_message(b_path), b.lesson, path_for_message(a_path), a.lesson));
  return runs;
}

json to_json(const RunComparison& c) {
  json params = json::array(), measured = json::array();
  for (const ComparedValue& row : c.params) params.push_back(row_json(row, false));
  for (const ComparedValue& row : c.measured) measured.push_back(row_json(row, true));
  return {{"lesson", c.lesson}, {"a", c.a_name},        {"b", c.b_name},
          {"params", params},   {"measured", measured}, {"benchmark", {{"a", c.a_benchmark}, {"b", c.b_benchmark}}}};
}

}  // namespace dlsys
