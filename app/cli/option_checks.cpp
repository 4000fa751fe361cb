#include "app/cli/option_checks.h"

#include <fmt/format.h>

#include "engine/json_io.h"
#include "engine/params.h"
#include "engine/units.h"

namespace dlsys {

namespace {
std::string refusal(const std::string& text, const std::string& why, const std::string& allowed) {
  // CLI11 puts the option's name in front.
  return fmt::format("value '{}' is not allowed ({}); allowed: {}", clip_for_message(text), why, allowed);
}
}  // namespace

CLI::Validator integer_from_to(std::int64_t min, std::int64_t max) {
  const std::string allowed = fmt::format("an integer from {} to {}", min, max);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const auto value = parse_integer_text(text);
        if (!value) return refusal(text, fmt::format("not an integer: {}", kNumberRule), allowed);
        if (*value < min || *value > max) return refusal(text, "out of range", allowed);
        return {};
      },
      fmt::format("INT in [{}, {}]", min, max));
}

CLI::Validator real_from_to(double min, double max) {
  const std::string allowed = fmt::format("a number from {} to {}", format_number(min), format_number(max));
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const auto value = parse_real_text(text);
        if (!value) return refusal(text, fmt::format("not a number: {}", kNumberRule), allowed);
        if (*value < min || *value > max) return refusal(text, "out of range", allowed);
        return {};
      },
      fmt::format("NUMBER in [{}, {}]", format_number(min), format_number(max)));
}

CLI::Validator output_path() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        return text.empty() ? "an empty file name is not allowed; allowed: a path, or - for stdout" : "";
      },
      "FILE");
}

}  // namespace dlsys
