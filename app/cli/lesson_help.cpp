#include "app/cli/lesson_help.h"

#include <fmt/format.h>

#include <algorithm>

namespace dlsys {

std::string lesson_params_help(const Lesson& lesson) {
  std::string out = fmt::format("\nParameters of lesson '{}' (--set key=value):\n", lesson.id());
  std::size_t width = 0;
  for (const auto& spec : lesson.params()) width = std::max(width, spec.key.size());
  for (const auto& spec : lesson.params()) {
    out += fmt::format("  {:<{}}  {}\n", spec.key, width, spec.label);
    const std::string indent(width + 4, ' ');
    out += fmt::format("{}allowed: {}\n", indent, spec.allowed());
    out += fmt::format("{}default: {}{}\n", indent, spec.default_text.empty() ? "(empty)" : spec.default_text,
                       spec.unit.empty() ? "" : " (unit: " + spec.unit + ")");
    if (!spec.help.empty()) out += fmt::format("{}{}\n", indent, spec.help);
  }
  return out;
}

}  // namespace dlsys
