#pragma once
// Checks on the command line's own options, applied to the text before CLI11 converts it, so its numbers follow
// the same rule as lesson parameters (engine/params.h) and every refusal names the range.
#include <CLI/CLI.hpp>
#include <cstdint>

namespace dlsys {

CLI::Validator integer_from_to(std::int64_t min, std::int64_t max);
CLI::Validator real_from_to(double min, double max);
// An output path: any text but empty ("-" for stdout where the option says so).
CLI::Validator output_path();

}  // namespace dlsys
