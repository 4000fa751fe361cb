#pragma once
// Plain-text rendering of a RunResult for the terminal: theory and measured values, then each series as a table.
#include <string>

#include "engine/run_result.h"

namespace dlsys {

std::string format_run_report(const RunResult& result);

}  // namespace dlsys
