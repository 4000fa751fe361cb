#include "engine/units.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "engine/params.h"

namespace dlsys {

std::optional<std::int64_t> parse_byte_size(std::string_view text) {
  // The number follows the parameters' one rule (params.h); the unit is the trailing run of letters.
  std::size_t unit_from = text.size();
  while (unit_from > 0 && std::isalpha(static_cast<unsigned char>(text[unit_from - 1]))) --unit_from;
  const auto parsed = parse_real_text(text.substr(0, unit_from));
  if (!parsed) return std::nullopt;
  const double number = *parsed;
  std::string suffix(text.substr(unit_from));
  for (auto& c : suffix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  double scale = 1;
  if (suffix.empty() || suffix == "b")
    scale = 1;
  else if (suffix == "k" || suffix == "kib")
    scale = 1024.0;
  else if (suffix == "m" || suffix == "mib")
    scale = 1024.0 * 1024;
  else if (suffix == "g" || suffix == "gib")
    scale = kBytesPerGiB;
  else if (suffix == "kb")
    scale = 1e3;
  else if (suffix == "mb")
    scale = 1e6;
  else if (suffix == "gb")
    scale = 1e9;
  else
    return std::nullopt;
  const double bytes = number * scale;
  if (!std::isfinite(bytes) || bytes != std::floor(bytes) || std::fabs(bytes) > 9.0e18) return std::nullopt;
  return static_cast<std::int64_t>(bytes);
}

namespace {
std::string trim_zeros(std::string s) {
  if (s.find('.') == std::string::npos) return s;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}
std::string scaled(double value, double base, const char* const* names) {
  int i = 0;
  while (std::fabs(value) >= base && names[i + 1] != nullptr) {
    value /= base;
    ++i;
  }
  return trim_zeros(fmt::format("{:.2f}", value)) + " " + names[i];
}
}  // namespace

std::string format_bytes_binary(double bytes) {
  static const char* const names[] = {"B", "KiB", "MiB", "GiB", "TiB", nullptr};
  return scaled(bytes, 1024.0, names);
}

std::string format_bytes_decimal(double bytes) {
  static const char* const names[] = {"B", "kB", "MB", "GB", "TB", nullptr};
  return scaled(bytes, 1000.0, names);
}

std::string format_bytes_both(double bytes) {
  return format_bytes_decimal(bytes) + " (" + format_bytes_binary(bytes) + ")";
}

std::string format_duration_us(double us) {
  if (us < 1) return fmt::format("{:.0f} ns", us * 1e3);
  if (us < 1e3) return fmt::format("{:.3g} us", us);
  if (us < 1e6) return fmt::format("{:.3g} ms", us / 1e3);
  return fmt::format("{:.3g} s", us / 1e6);
}

std::string format_number(double value, int significant) {
  if (!std::isfinite(value)) return "-";
  if (value == std::floor(value) && std::fabs(value) < 1e15) return fmt::format("{:.0f}", value);
  return fmt::format("{:.{}g}", value, significant);
}

std::string format_count(double value) {
  if (!std::isfinite(value) || std::fabs(value) >= 1e18 || value != std::floor(value)) return format_number(value);
  std::string digits = fmt::format("{:.0f}", std::fabs(value));
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(static_cast<std::size_t>(i), ",");
  return (value < 0 ? "-" : "") + digits;
}

}  // namespace dlsys
