#pragma once
// A saved lesson state, {"lesson", "step", "params"}: the GUI saves it, `--open` reads it back. Reading lives below the
// app so that a headless build (tests, the fuzz targets) checks the same reader the GUI uses.
#include <string>
#include <string_view>

#include "engine/backend.h"
#include "engine/params.h"
#include "lessons/common/lesson.h"

namespace dlsys {

struct LessonState {
  const Lesson* lesson = nullptr;
  int step = 0;  // 0-based; the file counts from 1, as the GUI shows steps
  ParamValues params;
};

// `step` is 0-based. Throws RunFailure when the file cannot be written.
void save_state_file(const std::string& path, const std::string& lesson_id, int step, const ParamValues& params);
// The text of a state file; `origin` starts every message. Throws BadInput naming what was wrong (not JSON, unknown
// lesson, bad parameter, parameters `backend` cannot run, step out of range).
LessonState parse_state_text(std::string_view text, const std::string& origin, BackendKind backend);
// The file at `path`, read with the checks every input file gets (regular file, size). Throws BadInput.
LessonState read_state_file(const std::string& path, BackendKind backend);

}  // namespace dlsys
