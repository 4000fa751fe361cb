#pragma once
// Typed lesson parameters: a spec (name, range, default) and the values a user gave, checked against the spec.
// Every rejection names the parameter, the value given and what is allowed; nothing is silently clamped.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dlsys {

enum class ParamType {
  Integer,   // whole number in [min, max]
  Real,      // floating point in [min, max]
  Bytes,     // a size such as 64MiB, in [min, max] bytes
  Choice,    // one of `choices`
  SizeList,  // "64..1024" (doubling), "64,128,512" or "1KiB..256MiB": each element in [min, max]
  Text,      // free text
  File,      // a path to a file (empty allowed when the default is empty); the GUI offers a file browser
};

struct ParamSpec {
  std::string key;
  std::string label;
  ParamType type = ParamType::Integer;
  std::string default_text;
  double min = 0;
  double max = 0;
  std::vector<std::string> choices;
  std::string unit;
  std::string help;

  std::string allowed() const;  // "an integer from 1 to 8192", "one of: all, naive, tiled"
};

// One checked value: `text` as the user wrote it, `number` for Integer/Real/Bytes, `list` for SizeList.
struct ParamValue {
  std::string text;
  double number = 0;
  std::vector<double> list;
};

class ParamValues {
 public:
  ParamValues() = default;
  // Defaults for every spec, then each "key=value" assignment in order. Throws BadInput.
  static ParamValues parse(const std::vector<ParamSpec>& specs, const std::vector<std::string>& assignments);
  static ParamValues defaults(const std::vector<ParamSpec>& specs);

  // Replaces one value after checking it against its spec. Throws BadInput.
  void set(const std::vector<ParamSpec>& specs, const std::string& key, const std::string& text);

  std::int64_t integer(const std::string& key) const;
  double real(const std::string& key) const;
  const std::string& text(const std::string& key) const;
  const std::vector<double>& list(const std::string& key) const;
  bool has(const std::string& key) const { return values_.count(key) != 0; }
  const std::map<std::string, ParamValue>& all() const { return values_; }

 private:
  const ParamValue& at(const std::string& key) const;
  std::map<std::string, ParamValue> values_;
};

// The one rule for numbers typed by a user, in parameters, state files and the command line's own options:
//   integer: decimal digits with an optional leading '-' ("64", "-5"); nothing else;
//   real:    an integer, optionally followed by '.' and digits, then optionally 'e' or 'E', an optional '-' or '+'
//            and digits ("0.5", "1e-3", "2.5E6", "1e+30": the exponent as the lab prints it, so a printed bound can be
//            typed back).
// No spaces, no leading '+', no hex, no leading '.', no "inf" or "nan". Returns nullopt when `text` breaks the rule or
// the value does not fit (an int64, a finite double).
std::optional<std::int64_t> parse_integer_text(std::string_view text);
std::optional<double> parse_real_text(std::string_view text);
inline constexpr const char* kNumberRule =
    "decimal digits with an optional leading '-' (an exponent may have its sign); no spaces, leading '+' or hex";

// The index of a Choice parameter's value in `choices` (the spec's own list, in the same order): how a lesson reads a
// choice as its enum, `static_cast<Mode>(choice_index(values, "mode", {"a", "b"}))`. Throws BadInput naming the key
// when the value is not in the list (a spec and its reader that disagree).
std::size_t choice_index(const ParamValues& values, const std::string& key, const std::vector<std::string>& choices);

const ParamSpec* find_spec(const std::vector<ParamSpec>& specs, const std::string& key);
// Checks `text` against `spec` and returns the parsed value. Throws BadInput.
ParamValue check_param(const ParamSpec& spec, const std::string& text);
// Expands "a..b" (doubling), "a,b,c" or a single value into numbers; throws BadInput naming `key`.
std::vector<double> parse_size_list(const std::string& key, const std::string& text, bool allow_byte_suffix);

}  // namespace dlsys
