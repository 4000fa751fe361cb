#include "engine/json_io.h"

#include <fmt/format.h>

#include <algorithm>

#include "engine/errors.h"

namespace dlsys {

namespace {

// nlohmann reports a byte offset; people fix files by line and column.
std::pair<std::size_t, std::size_t> line_and_column(std::string_view text, std::size_t byte) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < std::min(byte, text.size()); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

// Depth of [ and { outside strings, checked before parsing so no later step ever walks a deep value. Returns the
// offset of the first bracket past the limit, or npos.
std::size_t first_too_deep(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::string_view::npos;
}

template <class Json>
Json parse_checked(std::string_view text, const std::string& origin) {
  if (const std::size_t deep = first_too_deep(text); deep != std::string_view::npos) {
    const auto [line, column] = line_and_column(text, deep);
    throw BadInput(fmt::format("{}: nesting deeper than {} levels at line {}, column {}; allowed: at most {}", origin,
                               kMaxJsonDepth, line, column, kMaxJsonDepth));
  }
  try {
    return Json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    const auto [line, column] = line_and_column(text, e.byte == 0 ? 0 : e.byte - 1);
    throw BadInput(fmt::format("{}: not valid JSON at line {}, column {}", origin, line, column));
  } catch (const nlohmann::json::out_of_range&) {
    // The parser's only range error: a number literal beyond a double (1e400).
    throw BadInput(
        fmt::format("{}: a number is too large for a double (such as 1e400); allowed: numbers within "
                    "+-1.7e308",
                    origin));
  } catch (const nlohmann::json::exception& e) {
    throw BadInput(fmt::format("{}: cannot be read as JSON ({})", origin, clip_for_message(e.what(), 120)));
  }
}

}  // namespace

nlohmann::json parse_json_input(std::string_view text, const std::string& origin) {
  return parse_checked<nlohmann::json>(text, origin);
}

nlohmann::ordered_json parse_ordered_json_input(std::string_view text, const std::string& origin) {
  return parse_checked<nlohmann::ordered_json>(text, origin);
}

std::string describe_json_value(const nlohmann::json& value) {
  if (value.is_array()) return fmt::format("an array of {} element{}", value.size(), value.size() == 1 ? "" : "s");
  if (value.is_object()) return fmt::format("an object with {} key{}", value.size(), value.size() == 1 ? "" : "s");
  if (value.is_string()) return "the text \"" + clip_for_message(value.get_ref<const std::string&>()) + "\"";
  return clip_for_message(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

std::string dump_json_text(const nlohmann::ordered_json& json, int indent) {
  return json.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string clip_for_message(std::string_view text, std::size_t max_chars) {
  if (text.size() <= max_chars) return std::string(text);
  std::size_t keep = max_chars * 3 / 4;
  // Cut between UTF-8 characters, never inside one.
  while (keep > 0 && (static_cast<unsigned char>(text[keep]) & 0xC0) == 0x80) --keep;
  return fmt::format("{}... ({} characters in all)", text.substr(0, keep), text.size());
}

}  // namespace dlsys
