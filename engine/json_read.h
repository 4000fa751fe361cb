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
// null: the lab writes NaN and infinities that way (JSON has no word for them), and reads them back as NaN.
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

// An optional field of a values struct (DLSYS_VALUES_JSON writes it only when it holds a value): read when its key is
// there, empty when it is not.
template <class T>
void read_key(const nlohmann::ordered_json& object, const std::string& key, std::optional<T>& out) {
  read_key_if_present(object, key, out);
}

// A flag the lab writes as 1 or 0 (scripts sum them): read back as a bool.
inline void read_flag_key(const nlohmann::ordered_json& object, const std::string& key, bool& out) {
  int flag = 0;
  read_key(object, key, flag);
  if (flag != 0 && flag != 1) throw JsonKeyError(key, "expected 0 or 1");
  out = flag == 1;
}

}  // namespace dlsys
