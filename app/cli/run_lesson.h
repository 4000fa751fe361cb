#pragma once
// Parsing a lesson's --set assignments and running it: shared by `run`, `shot`, `export` and the GUI worker.
#include <string>
#include <vector>

#include "engine/run_result.h"
#include "lessons/common/lesson.h"

namespace dlsys {

// Parses and validates the assignments against the lesson's specs, after the lesson's quick parameters when `quick`
// (so an assignment can still override them). Throws BadInput.
ParamValues parse_lesson_params(const Lesson& lesson, const std::vector<std::string>& assignments, bool quick = false);
// Runs the lesson with a fresh ledger. Throws BadInput, RunFailure or Cancelled.
RunResult run_lesson(const Lesson& lesson, const ParamValues& params, BackendKind backend, RunControl& control);

}  // namespace dlsys
