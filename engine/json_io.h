#pragma once
// JSON the user hands the lab (config.json, saved states) and JSON the lab writes. Reading refuses what would crash or
// mislead later: nesting deeper than any real file has (printing such a value recurses once per level), numbers
// beyond a double, bad syntax, each as BadInput with the line and column. Writing replaces bytes that are not UTF-8
// (a path in another encoding) instead of throwing after the work is done.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace dlsys {

// Hugging Face configs nest three or four levels; a hundred is generous and still far from the stack's limit.
inline constexpr int kMaxJsonDepth = 100;

// Parses `text`; `origin` starts every message ("config 'x.json'", "state file 'y.json'"). Throws BadInput.
nlohmann::json parse_json_input(std::string_view text, const std::string& origin);
// The same, keeping the keys in the file's order (the lab's own files, whose order carries meaning).
nlohmann::ordered_json parse_ordered_json_input(std::string_view text, const std::string& origin);

// A value for a message: numbers, booleans and short strings as written, long strings clipped, arrays and objects by
// kind and size, never their whole contents.
std::string describe_json_value(const nlohmann::json& value);

// `json.dump(indent)` with invalid UTF-8 replaced by U+FFFD.
std::string dump_json_text(const nlohmann::ordered_json& json, int indent);

// `text` if it is short, else its start and its length, so a 10,000-character value does not flood a message.
std::string clip_for_message(std::string_view text, std::size_t max_chars = 80);

}  // namespace dlsys
