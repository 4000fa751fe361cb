#pragma once
// Parsing a lesson's --set assignments and running it: shared by `run`, `shot`, `export` and the GUI worker.
#include <string>
#include <vector>

#include "engine/run_result.h"
#include "lessons/common/lesson.h"

namespace dlsys {

// The backend a request means for this lesson: "auto" is the CPU for a lesson without a CUDA implementation, else
// as resolve_backend() says. Throws BadInput for an unknown or unavailable backend.
BackendKind backend_for(const Lesson& lesson, const std::string& requested);

// Parses the assignments against the lesson's specs, after the lesson's quick parameters when `quick` and its GPU sizes
// when `backend` is CUDA (so an assignment can still override them), and validates them for `backend`; every file
// parameter given must be a file the lab can read. Throws BadInput.
ParamValues parse_lesson_params(const Lesson& lesson, const std::vector<std::string>& assignments, BackendKind backend,
                                bool quick = false);
// Validates the parameters for `backend` (files included) and what the run needs from this machine, then runs the
// lesson with a fresh ledger. Throws BadInput, RunFailure or Cancelled.
RunResult run_lesson(const Lesson& lesson, const ParamValues& params, BackendKind backend, RunControl& control);

}  // namespace dlsys
