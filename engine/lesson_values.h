#pragma once
// A lesson's theory or measured values as its own typed struct. Its view, its text report and its tests read the
// struct's fields by name, so a misspelt value fails to compile; JSON (and the CSV made from it) is only an export
// format, written from the struct by a `to_json(nlohmann::ordered_json&, const T&)` found next to T.
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "engine/json_read.h"
#include "engine/measure.h"

namespace dlsys {
// One field under its own name; an optional one only when it holds a value.
template <class T>
void write_key(nlohmann::ordered_json& object, const char* key, const T& value) {
  object[key] = value;
}
template <class T>
void write_key(nlohmann::ordered_json& object, const char* key, const std::optional<T>& value) {
  if (value) object[key] = *value;
}
}  // namespace dlsys

// Defines `to_json` for a struct of plain fields: each field under its own name, in the order listed. (nlohmann's
// NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE writes only to nlohmann::json in Debian's 3.11.2, which would lose the order.)
#define DLSYS_VALUES_TO_JSON_ONE(field) ::dlsys::write_key(nlohmann_json_j, #field, nlohmann_json_t.field);
#define DLSYS_VALUES_TO_JSON(Type, ...)                                                       \
  inline void to_json(nlohmann::ordered_json& nlohmann_json_j, const Type& nlohmann_json_t) { \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(DLSYS_VALUES_TO_JSON_ONE, __VA_ARGS__))          \
  }

// The matching reader, for a recorded run opened again: each field from the key of its name (read_key), so a missing
// key or a value of the wrong kind is reported by its path.
#define DLSYS_VALUES_FROM_JSON_ONE(field) ::dlsys::read_key(nlohmann_json_j, #field, nlohmann_json_t.field);
#define DLSYS_VALUES_FROM_JSON(Type, ...)                                                       \
  inline void from_json(const nlohmann::ordered_json& nlohmann_json_j, Type& nlohmann_json_t) { \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(DLSYS_VALUES_FROM_JSON_ONE, __VA_ARGS__))          \
  }
// The reader of a struct whose fields must also agree with each other (arrays read side by side): `check(value)`
// runs once every field is read and throws JsonKeyError naming the key.
#define DLSYS_VALUES_FROM_JSON_CHECKED(Type, check, ...)                                        \
  inline void from_json(const nlohmann::ordered_json& nlohmann_json_j, Type& nlohmann_json_t) { \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(DLSYS_VALUES_FROM_JSON_ONE, __VA_ARGS__))          \
    check(nlohmann_json_t);                                                                     \
  }
// Both directions for a struct of plain fields.
#define DLSYS_VALUES_JSON(Type, ...)      \
  DLSYS_VALUES_TO_JSON(Type, __VA_ARGS__) \
  DLSYS_VALUES_FROM_JSON(Type, __VA_ARGS__)

namespace dlsys {

// How a lesson's JSON spells a TimeSpread's three keys from a stem (kept exactly as recorded runs have them):
//   UnitLast:  "<stem>_us", "<stem>_min_us", "<stem>_max_us"  (an empty stem: "us", "min_us", "max_us")
//   UnitFirst: "<stem>_us", "<stem>_us_min", "<stem>_us_max"
enum class SpreadKeys { UnitLast, UnitFirst };

inline std::string spread_key(const std::string& stem, const char* which, SpreadKeys keys) {
  const std::string head = stem.empty() ? "" : stem + "_";
  if (*which == 0) return head + "us";
  return keys == SpreadKeys::UnitLast ? head + which + "_us" : head + "us_" + which;
}
inline void write_spread(nlohmann::ordered_json& object, const std::string& stem, const TimeSpread& t,
                         SpreadKeys keys) {
  object[spread_key(stem, "", keys)] = t.us;
  object[spread_key(stem, "min", keys)] = t.min_us;
  object[spread_key(stem, "max", keys)] = t.max_us;
}
inline void read_spread(const nlohmann::ordered_json& object, const std::string& stem, TimeSpread& t, SpreadKeys keys) {
  read_key(object, spread_key(stem, "", keys), t.us);
  read_key(object, spread_key(stem, "min", keys), t.min_us);
  read_key(object, spread_key(stem, "max", keys), t.max_us);
}

struct LessonValues {
  virtual ~LessonValues() = default;
  virtual nlohmann::ordered_json to_json() const = 0;
};

template <class T>
struct TypedValues final : LessonValues {
  explicit TypedValues(T v) : value(std::move(v)) {}
  nlohmann::ordered_json to_json() const override { return nlohmann::ordered_json(value); }
  T value;
};

template <class T>
std::shared_ptr<const LessonValues> make_values(T value) {
  return std::make_shared<const TypedValues<T>>(std::move(value));
}

// The struct behind `values` when it is a T; nullptr otherwise (no values, another lesson's, or read back from JSON).
template <class T>
const T* values_as(const std::shared_ptr<const LessonValues>& values) {
  const auto* typed = dynamic_cast<const TypedValues<T>*>(values.get());
  return typed ? &typed->value : nullptr;
}
// Not from a temporary: the struct would die with it.
template <class T>
const T* values_as(std::shared_ptr<const LessonValues>&& values) = delete;

}  // namespace dlsys
