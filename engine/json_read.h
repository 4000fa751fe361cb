#pragma once
// Reading the lab's own JSON back into typed structs (a recorded run's theory and measured values, its series and
// timelines). Every value is checked for its kind before it is taken, and a missing key or a value of the wrong kind
// is reported by its whole path ("measured.variants[2].gflops: missing"), which nlohmann's own messages do not give.
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace dlsys {

// A key that is missing or holds the wrong kind of value. `path()` grows as the error passes up through the
// enclosing objects and arrays.
class JsonKeyError : public std::runtime_error {
 public:
  JsonKeyError(std::string path, std::string problem)
      : std::runtime_error(path + ": " + problem), path_(std::move(path)), problem_(std::move(problem)) {}
  const std::string& path() const { return path_; }
  const std::string& problem() const { return problem_; }
  // A copy with `outer` in front of the path: "sweep" + "[3].bytes".
  JsonKeyError within(const std::string& outer) const {
    const bool index = !path_.empty() && path_[0] == '[';
    return JsonKeyError(path_.empty() ? outer : outer + (index ? "" : ".") + path_, problem_);
  }

 private:
  std::string path_, problem_;
};

namespace json_read_detail {
template <class T>
struct is_vector : std::false_type {};
template <class T, class A>
struct is_vector<std::vector<T, A>> : std::true_type {};
template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};
template <class T>
struct is_pair : std::false_type {};
template <class A, class B>
struct is_pair<std::pair<A, B>> : std::true_type {};
}  // namespace json_read_detail

// Reads `value` into `out`: numbers, booleans, strings, vectors, optionals (null: none) and structs that have a
// `from_json(const nlohmann::ordered_json&, T&)` beside them; a JSON value itself is copied unchecked. A double may be
// null: the lab writes NaN that way (a slope fitted to one size), and reads it back as NaN; what is drawn as a shape
// rather than as text (points, spans) is checked with check_finite. An integer must fit its type, not wrap.
template <class T>
void read_value(const nlohmann::ordered_json& value, T& out) {
  using namespace json_read_detail;
  if constexpr (std::is_same_v<T, nlohmann::ordered_json>) {
    out = value;  // taken as it is; the caller looks inside
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!value.is_boolean()) throw JsonKeyError("", "expected true or false");
    out = value.get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    if (!value.is_number_integer()) throw JsonKeyError("", "expected an integer");
    const bool fits =
        value.is_number_unsigned()
            ? value.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<T>::max())
            : value.get<std::int64_t>() >= static_cast<std::int64_t>(std::numeric_limits<T>::min()) &&
                  (value.get<std::int64_t>() < 0 || static_cast<std::uint64_t>(value.get<std::int64_t>()) <=
                                                        static_cast<std::uint64_t>(std::numeric_limits<T>::max()));
    if (!fits)
      throw JsonKeyError("", "expected an integer from " + std::to_string(std::numeric_limits<T>::min()) + " to " +
                                 std::to_string(std::numeric_limits<T>::max()));
    out = value.get<T>();
  } else if constexpr (std::is_floating_point_v<T>) {
    if (value.is_null())
      out = std::numeric_limits<T>::quiet_NaN();
    else if (!value.is_number())
      throw JsonKeyError("", "expected a number");
    else
      out = value.get<T>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!value.is_string()) throw JsonKeyError("", "expected a string");
    out = value.get<std::string>();
  } else if constexpr (is_optional<T>::value) {
    if (value.is_null()) {
      out.reset();
    } else {
      typename T::value_type inner{};
      read_value(value, inner);
      out = std::move(inner);
    }
  } else if constexpr (is_vector<T>::value) {
    if (!value.is_array()) throw JsonKeyError("", "expected an array");
    out.clear();
    out.resize(value.size());
    for (std::size_t i = 0; i < value.size(); ++i) {
      try {
        read_value(value[i], out[i]);
      } catch (const JsonKeyError& e) {
        throw e.within("[" + std::to_string(i) + "]");
      }
    }
  } else {
    if (!value.is_object()) throw JsonKeyError("", "expected an object");
    from_json(value, out);  // the struct's own, found beside it
  }
}

// Reads `object[key]` into `out`; the key must be there.
template <class T>
void read_key(const nlohmann::ordered_json& object, const std::string& key, T& out) {
  if (!object.is_object()) throw JsonKeyError("", "expected an object");
  const auto found = object.find(key);
  if (found == object.end()) throw JsonKeyError(key, "missing");
  try {
    read_value(*found, out);
  } catch (const JsonKeyError& e) {
    throw e.within(key);
  }
}

// Reads `object[key]` into `out` when the key is there; leaves `out` empty when it is not (values written only when
// they exist).
template <class T>
void read_key_if_present(const nlohmann::ordered_json& object, const std::string& key, std::optional<T>& out) {
  if (object.is_object() && object.contains(key)) {
    T inner{};
    read_key(object, key, inner);
    out = std::move(inner);
  } else {
    out.reset();
  }
}

// An optional field of a values struct (DLSYS_VALUES_JSON writes it only when it holds a value): empty when its key is
// missing or null, read when it is there.
template <class T>
void read_key(const nlohmann::ordered_json& object, const std::string& key, std::optional<T>& out) {
  if (!object.is_object()) throw JsonKeyError("", "expected an object");
  const auto found = object.find(key);
  if (found == object.end()) return out.reset();
  try {
    read_value(*found, out);
  } catch (const JsonKeyError& e) {
    throw e.within(key);
  }
}

// An index the file gives into one of its own arrays (`size` elements): refused unless 0 <= index < size, so a view
// can take it as it is.
template <class I>
void check_index(const std::string& key, I index, std::size_t size, const std::string& array) {
  bool negative = false;
  if constexpr (std::is_signed_v<I>) negative = index < 0;
  if (negative || static_cast<std::uint64_t>(index) >= size)
    throw JsonKeyError(key, std::to_string(index) + " is not an index into " + array + " (" + std::to_string(size) +
                                " elements); allowed: 0 to " + (size == 0 ? "none" : std::to_string(size - 1)));
}

// A number a view turns into a position or a length: NaN (written as null) would reach the drawing code.
inline void check_finite(const std::string& key, double value) {
  if (!std::isfinite(value)) throw JsonKeyError(key, "expected a finite number, not null");
}

// A count the file states for one of its arrays (rows, ranks): refused unless the array has that many elements.
inline void check_length(const std::string& key, std::size_t length, std::size_t expected, const std::string& what) {
  if (length != expected)
    throw JsonKeyError(
        key, "has " + std::to_string(length) + " elements; expected " + std::to_string(expected) + " (" + what + ")");
}

// An array a view draws from its first or last element: it must have one.
inline void check_not_empty(const std::string& key, std::size_t length) {
  if (length == 0) throw JsonKeyError(key, "is empty; expected at least one element");
}

// A flag the lab writes as 1 or 0 (scripts sum them): read back as a bool.
inline void read_flag_key(const nlohmann::ordered_json& object, const std::string& key, bool& out) {
  int flag = 0;
  read_key(object, key, flag);
  if (flag != 0 && flag != 1) throw JsonKeyError(key, "expected 0 or 1");
  out = flag == 1;
}

}  // namespace dlsys
