#pragma once
// A run file: what `dlsys-lab run LESSON --json FILE` (or the GUI's "Last run as JSON") wrote, read back so the
// lesson's views draw it exactly as they drew the live run, on any machine (a run recorded on a GPU node, opened on
// a laptop with no GPU). The theory and measured values come back as the lesson's own typed structs.
#include <nlohmann/json.hpp>
#include <string>

#include "engine/run_result.h"
#include "lessons/common/lesson.h"

namespace dlsys {

// Theory and measured JSON of `lesson` turned into its typed structs (an empty object: none), set on `result`.
// Throws BadInput naming the lesson and the key's path ("measured.sweep[3].busbw_gbps: missing").
void read_typed_values(const Lesson& lesson, const nlohmann::ordered_json& theory,
                       const nlohmann::ordered_json& measured, RunResult& result);

// A whole run file's JSON: it must carry a `recorded` object of this build's format version, name a known lesson,
// hold every key the lesson's values need (every number finite, every index inside its array), and parameters
// within the lesson's ranges that give the theory it holds. `origin` starts every message ("run file 'x.json'"). Throws
// BadInput.
RunResult run_from_json(const nlohmann::ordered_json& json, const std::string& origin);
// The file at `path`, read with the checks every input file gets (regular file, size, nesting). Throws BadInput.
RunResult read_run_file(const std::string& path);

// A run's parameters as the lesson's typed values, checked against its ranges (not against this machine's backend).
// Throws BadInput naming the parameter.
ParamValues recorded_params(const Lesson& lesson, const RunResult& result);

// "1" (or "1, 2" once a later build reads older files too): for messages.
std::string understood_run_format_versions();

}  // namespace dlsys
