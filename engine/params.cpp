#include "engine/params.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "engine/errors.h"
#include "engine/json_io.h"
#include "engine/units.h"

namespace dlsys {

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

[[noreturn]] void reject(const ParamSpec& spec, const std::string& text, const std::string& why = "") {
  // A number that breaks the one rule is told the rule, so " 5" or "0x10" are not a puzzle.
  const bool number_rule = why == "not a number";
  throw BadInput(fmt::format("parameter '{}': value '{}' is not allowed{}; allowed: {}{}", spec.key,
                             clip_for_message(text), why.empty() ? "" : " (" + why + ")", spec.allowed(),
                             number_rule ? fmt::format(", written as {}", kNumberRule) : ""));
}

bool parse_double(const std::string& text, double& out) {
  const auto value = parse_real_text(text);
  if (value) out = *value;
  return value.has_value();
}

std::size_t skip_digits(std::string_view text, std::size_t i) {
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  return i;
}

std::string bound_text(const ParamSpec& spec, double value) {
  if (spec.type == ParamType::Bytes || (spec.type == ParamType::SizeList && spec.unit == "bytes"))
    return format_bytes_binary(value);
  return format_number(value, 6);
}

}  // namespace

std::optional<std::int64_t> parse_integer_text(std::string_view text) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  const std::size_t digits_from = !text.empty() && text[0] == '-' ? 1 : 0;
  if (skip_digits(text, digits_from) != text.size() || text.size() == digits_from) return std::nullopt;
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || stop != end) return std::nullopt;
  return value;
}

std::optional<double> parse_real_text(std::string_view text) {
  std::size_t i = !text.empty() && text[0] == '-' ? 1 : 0;
  const std::size_t whole_from = i;
  i = skip_digits(text, i);
  if (i == whole_from) return std::nullopt;
  if (i < text.size() && text[i] == '.') {
    const std::size_t fraction_from = ++i;
    i = skip_digits(text, i);
    if (i == fraction_from) return std::nullopt;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
    const std::size_t exponent_from = i;
    i = skip_digits(text, i);
    if (i == exponent_from) return std::nullopt;
  }
  if (i != text.size()) return std::nullopt;
  const std::string copy(text);  // strtod needs a terminated string; the grammar above already holds
  const double value = std::strtod(copy.c_str(), nullptr);
  if (!std::isfinite(value)) return std::nullopt;
  return value;
}

std::string ParamSpec::allowed() const {
  const std::string range = fmt::format("from {} to {}", bound_text(*this, min), bound_text(*this, max));
  switch (type) {
    case ParamType::Integer:
      return "an integer " + range;
    case ParamType::Real:
      return "a number " + range;
    case ParamType::Bytes:
      return "a size " + range + " (e.g. 4096, 64KiB, 64MiB, 1GB)";
    case ParamType::Choice:
      return "one of: " + join(choices);
    case ParamType::SizeList:
      return "a list like 64..1024 (doubling) or 64,128,256, each " + range;
    case ParamType::Text:
      return "any text";
    case ParamType::File:
      return "a path to a file" + std::string(default_text.empty() ? ", or empty for none" : "");
  }
  return "";
}

std::vector<double> parse_size_list(const std::string& key, const std::string& text, bool allow_byte_suffix) {
  auto one = [&](const std::string& item) {
    double v = 0;
    if (allow_byte_suffix) {
      if (auto bytes = parse_byte_size(item)) return static_cast<double>(*bytes);
    } else if (parse_double(item, v)) {
      return v;
    }
    throw BadInput(fmt::format("parameter '{}': '{}' in '{}' is not a {}", key, clip_for_message(item),
                               clip_for_message(text), allow_byte_suffix ? "size" : "number"));
  };
  std::vector<double> out;
  if (const auto dots = text.find(".."); dots != std::string::npos) {
    const double first = one(text.substr(0, dots));
    const double last = one(text.substr(dots + 2));
    if (first <= 0 || last < first)
      throw BadInput(fmt::format("parameter '{}': range '{}' must go from a positive value up to a larger one", key,
                                 clip_for_message(text)));
    for (double v = first; v <= last; v *= 2) out.push_back(v);
    return out;
  }
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    out.push_back(one(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

ParamValue check_param(const ParamSpec& spec, const std::string& text) {
  ParamValue value;
  value.text = text;
  switch (spec.type) {
    case ParamType::Integer:
    case ParamType::Real: {
      if (spec.type == ParamType::Integer) {
        const auto whole = parse_integer_text(text);
        if (!whole) reject(spec, text, parse_real_text(text) ? "not a whole number" : "not a number");
        value.number = static_cast<double>(*whole);
      } else if (!parse_double(text, value.number)) {
        reject(spec, text, "not a number");
      }
      if (value.number < spec.min || value.number > spec.max) reject(spec, text, "out of range");
      break;
    }
    case ParamType::Bytes: {
      const auto bytes = parse_byte_size(text);
      if (!bytes) reject(spec, text, "not a size");
      value.number = static_cast<double>(*bytes);
      if (value.number < spec.min || value.number > spec.max) reject(spec, text, "out of range");
      break;
    }
    case ParamType::Choice: {
      bool known = false;
      for (const auto& choice : spec.choices) known = known || choice == text;
      if (!known) reject(spec, text, "unknown choice");
      break;
    }
    case ParamType::SizeList: {
      try {
        value.list = parse_size_list(spec.key, text, spec.unit == "bytes");
      } catch (const BadInput& e) {
        throw BadInput(fmt::format("{}; allowed: {}", e.what(), spec.allowed()));
      }
      std::vector<double> checked = value.list;
      if (const auto dots = text.find(".."); dots != std::string::npos)  // the range's end counts even if not reached
        checked.push_back(parse_size_list(spec.key, text.substr(dots + 2), spec.unit == "bytes").front());
      for (double v : checked) {
        if (v != std::floor(v) || v < spec.min || v > spec.max)
          reject(spec, text, fmt::format("element {} out of range", format_number(v)));
      }
      if (value.list.size() > 64) reject(spec, text, "more than 64 sizes");
      break;
    }
    case ParamType::Text:
    case ParamType::File:
      break;  // the lesson opens the file and names what is wrong with it
  }
  return value;
}

const ParamSpec* find_spec(const std::vector<ParamSpec>& specs, const std::string& key) {
  for (const auto& spec : specs)
    if (spec.key == key) return &spec;
  return nullptr;
}

ParamValues ParamValues::defaults(const std::vector<ParamSpec>& specs) {
  ParamValues values;
  for (const auto& spec : specs) values.values_[spec.key] = check_param(spec, spec.default_text);
  return values;
}

void ParamValues::set(const std::vector<ParamSpec>& specs, const std::string& key, const std::string& text) {
  const ParamSpec* spec = find_spec(specs, key);
  if (spec == nullptr) {
    std::vector<std::string> keys;
    for (const auto& s : specs) keys.push_back(s.key);
    throw BadInput(
        fmt::format("unknown parameter '{}'; this lesson's parameters are: {}", clip_for_message(key), join(keys)));
  }
  values_[key] = check_param(*spec, text);
}

ParamValues ParamValues::parse(const std::vector<ParamSpec>& specs, const std::vector<std::string>& assignments) {
  ParamValues values = defaults(specs);
  for (const auto& assignment : assignments) {
    const auto eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0)
      throw BadInput(fmt::format("'--set {}' is not of the form key=value", clip_for_message(assignment)));
    values.set(specs, assignment.substr(0, eq), assignment.substr(eq + 1));
  }
  return values;
}

const ParamValue& ParamValues::at(const std::string& key) const {
  const auto it = values_.find(key);
  if (it == values_.end()) throw std::logic_error("lesson read undeclared parameter '" + key + "'");
  return it->second;
}

std::int64_t ParamValues::integer(const std::string& key) const { return static_cast<std::int64_t>(at(key).number); }
double ParamValues::real(const std::string& key) const { return at(key).number; }
const std::string& ParamValues::text(const std::string& key) const { return at(key).text; }
const std::vector<double>& ParamValues::list(const std::string& key) const { return at(key).list; }

std::size_t choice_index(const ParamValues& values, const std::string& key, const std::vector<std::string>& choices) {
  const std::string& value = values.text(key);
  for (std::size_t i = 0; i < choices.size(); ++i)
    if (choices[i] == value) return i;
  throw BadInput(fmt::format("parameter '{}': value '{}' is not allowed; allowed: one of: {}", key,
                             clip_for_message(value), fmt::join(choices, ", ")));
}

}  // namespace dlsys
