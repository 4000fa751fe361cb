#include <fmt/format.h>

#include <ostream>

#include "app/cli/shot_command.h"
#include "app/export/timeline_export.h"
#include "engine/errors.h"
#include "engine/file_io.h"
#include "lessons/common/run_lesson.h"
#include "lessons/registry.h"

namespace dlsys {

int export_command(const ExportOptions& o, std::ostream& out, std::ostream&) {
  check_outputs_distinct({o.svg_path, o.trace_path});
  const Lesson& lesson = find_lesson(o.lesson);
  if (!lesson.has_timeline()) {
    std::string with;
    for (const Lesson* l : all_lessons())
      if (l->has_timeline()) with += (with.empty() ? "" : ", ") + l->id();
    throw BadInput(fmt::format("lesson '{}' has no timeline to export; lessons with timelines: {}", o.lesson,
                               with.empty() ? "none yet" : with));
  }
  if (o.svg_path.empty() && o.trace_path.empty()) throw BadInput("export needs --svg FILE or --trace FILE.json");
  const BackendKind backend = backend_for(lesson, o.backend);
  const ParamValues params = parse_lesson_params(lesson, o.sets, backend);
  // Without --run the timelines come from the parameters alone: the simulated schedule, in cost units.
  std::vector<Timeline> timelines;
  std::string subtitle;
  if (o.run) {
    RunControl control;
    const RunResult result = run_lesson(lesson, params, backend, control);
    timelines = result.timelines;
    subtitle = timeline_export_subtitle(lesson.title(), &result.backend);
  } else {
    timelines = lesson.theory_timelines(params);
    subtitle = timeline_export_subtitle(lesson.title(), nullptr);
  }
  // Both files or neither: a trace that cannot be written must not leave a fresh SVG beside an old trace.
  std::vector<std::pair<std::string, std::string>> files;
  if (!o.svg_path.empty())
    files.emplace_back(o.svg_path, timelines_to_svg(timelines, timeline_export_title(timelines), subtitle));
  if (!o.trace_path.empty()) files.emplace_back(o.trace_path, timelines_to_chrome_trace(timelines));
  write_files_checked(files);
  for (const auto& file : files) out << fmt::format("wrote {}\n", file.first);
  check_stream_written(out, "stdout");
  return 0;
}

}  // namespace dlsys
