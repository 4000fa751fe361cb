#include "app/cli/compare_command.h"

#include <fmt/format.h>

#include <ostream>
#include <utility>
#include <vector>

#include "engine/errors.h"
#include "engine/file_io.h"
#include "engine/json_io.h"
#include "lessons/registry.h"

namespace dlsys {

namespace {

// Set once by main() before any command runs, so no lock is needed.
CompareRenderer registered_renderer = nullptr;

std::string ratio_text(const ComparedValue& row) {
  return row.ratio_b_over_a ? fmt::format("{:.3g}", *row.ratio_b_over_a) : "-";
}

// The table as `compare` prints it when no output file is named: a differing parameter marked with '*'.
std::string comparison_text(const RunComparison& c) {
  std::string out =
      fmt::format("lesson {}\nA: {}\nB: {}\n\nparameters (* where they differ)\n", c.lesson, c.a_name, c.b_name);
  for (const ComparedValue& row : c.params)
    out += fmt::format("  {} {:<20} {:>16} {:>16}\n", row.differs ? '*' : ' ', row.name, row.a, row.b);
  out += fmt::format("\nmeasured{:>31} {:>16} {:>10}\n", "A", "B", "B / A");
  for (const ComparedValue& row : c.measured)
    out += fmt::format("  {:<28} {:>16} {:>16} {:>10}\n", row.name, row.a, row.b, ratio_text(row));
  if (!c.a_benchmark.empty() || !c.b_benchmark.empty())
    out += fmt::format("\nA: {}\nB: {}\n", c.a_benchmark.empty() ? "(no benchmark line)" : c.a_benchmark,
                       c.b_benchmark.empty() ? "(no benchmark line)" : c.b_benchmark);
  return out;
}

}  // namespace

void set_compare_renderer(CompareRenderer renderer) { registered_renderer = renderer; }

int compare_command(const CompareOptions& o, std::ostream& out) {
  check_outputs_distinct({o.output_png, o.json_path});
  const RunsToCompare runs = read_runs_to_compare(o.a_path, o.b_path);
  const Lesson& lesson = find_lesson(runs.a.lesson);
  if (o.step < 1 || o.step > static_cast<int>(lesson.step_count()))
    throw BadInput(fmt::format("--step {} is out of range; lesson '{}' has steps 1 to {}", o.step, lesson.id(),
                               lesson.step_count()));
  const RunComparison comparison = compare_runs(lesson, runs.a, runs.b);
  if (o.output_png.empty() && o.json_path.empty()) {
    out << comparison_text(comparison);
    check_stream_written(out, "stdout");
    return 0;
  }
  // The figure and the table are one result: both files are written, or neither.
  std::vector<std::pair<std::string, std::string>> files;
  std::string rendered;
  if (!o.output_png.empty()) {
    if (registered_renderer == nullptr)
      throw BadInput(
          "this build has no GUI (configured with DLSYS_WITH_GUI=OFF), so `compare -o` cannot render; "
          "--json alone works");
    RenderedFigure figure = registered_renderer(o, runs.a, runs.b);
    files.emplace_back(o.output_png, std::move(figure.png));
    rendered = figure.description;
  }
  const std::string table = dump_json_text(to_json(comparison), 2) + "\n";
  if (!o.json_path.empty() && o.json_path != "-") files.emplace_back(o.json_path, table);
  write_files_checked(files);
  if (o.json_path == "-") {
    out << table;
  } else {
    out << rendered;
    if (!o.json_path.empty()) out << fmt::format("wrote {} (the table)\n", o.json_path);
  }
  check_stream_written(out, "stdout");
  return 0;
}

}  // namespace dlsys
