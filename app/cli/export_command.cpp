#include <fmt/format.h>

#include <fstream>
#include <ostream>

#include "app/cli/shot_command.h"
#include "app/export/timeline_export.h"
#include "engine/errors.h"
#include "lessons/common/run_lesson.h"
#include "lessons/registry.h"

namespace dlsys {

int export_command(const ExportOptions& o, std::ostream& out, std::ostream&) {
  const Lesson& lesson = find_lesson(o.lesson);
  if (!lesson.has_timeline()) {
    std::string with;
    for (const Lesson* l : all_lessons())
      if (l->has_timeline()) with += (with.empty() ? "" : ", ") + l->id();
    throw BadInput(fmt::format("lesson '{}' has no timeline to export; lessons with timelines: {}", o.lesson,
                               with.empty() ? "none yet" : with));
  }
  if (o.svg_path.empty() && o.trace_path.empty()) throw BadInput("export needs --svg FILE or --trace FILE.json");
  const BackendKind backend = resolve_backend(o.backend);
  const ParamValues params = parse_lesson_params(lesson, o.sets, backend);
  RunControl control;
  const RunResult result = run_lesson(lesson, params, backend, control);
  auto write = [&](const std::string& path, const std::string& text) {
    std::ofstream file(path, std::ios::binary);
    if (!file) throw BadInput(fmt::format("cannot write '{}'", path));
    file << text;
    out << fmt::format("wrote {}\n", path);
  };
  if (!o.svg_path.empty()) write(o.svg_path, timelines_to_svg(result.timelines, lesson.title()));
  if (!o.trace_path.empty()) write(o.trace_path, timelines_to_chrome_trace(result.timelines));
  return 0;
}

}  // namespace dlsys
