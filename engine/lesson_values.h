#pragma once
// A lesson's theory or measured values as its own typed struct. Its view, its text report and its tests read the
// struct's fields by name, so a misspelt value fails to compile; JSON (and the CSV made from it) is only an export
// format, written from the struct by a `to_json(nlohmann::ordered_json&, const T&)` found next to T.
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "engine/json_read.h"
#include "engine/measure.h"

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

// A TimeSpread field written as its stem's three keys (the field's name is the stem). It converts from and to a
// TimeSpread, so the code that measures and draws it is unchanged.
template <SpreadKeys Keys>
struct SpreadField : TimeSpread {
  SpreadField() = default;
  SpreadField(const TimeSpread& spread) : TimeSpread(spread) {}  // NOLINT: implicit on purpose
};
using SpreadUnitLast = SpreadField<SpreadKeys::UnitLast>;
using SpreadUnitFirst = SpreadField<SpreadKeys::UnitFirst>;

// A bool written as 1 or 0, as some lessons' recorded runs have their checks; read back with read_flag_key.
struct FlagField {
  FlagField() = default;
  FlagField(bool set) : value(set) {}  // NOLINT: implicit on purpose
  operator bool() const { return value; }
  bool value = false;
};

// An optional field written as null when it holds nothing (so a script finds its key either way); read back empty from
// null or from a missing key.
template <class T>
struct NullableField : std::optional<T> {
  using std::optional<T>::optional;
  NullableField(std::optional<T> value) : std::optional<T>(std::move(value)) {}  // NOLINT: implicit on purpose
};

// One field under its key: an optional one only when it holds a value, a spread as its three keys. The readers are
// read_key (engine/json_read.h) and the read_key for spreads below.
template <class T>
void write_key(nlohmann::ordered_json& object, const std::string& key, const T& value) {
  object[key] = value;
}
template <class T>
void write_key(nlohmann::ordered_json& object, const std::string& key, const std::optional<T>& value) {
  if (value) object[key] = *value;
}
template <class T>
void write_key(nlohmann::ordered_json& object, const std::string& key, const NullableField<T>& value) {
  if (value)
    object[key] = *value;
  else
    object[key] = nullptr;
}
template <class T>
void read_key(const nlohmann::ordered_json& object, const std::string& key, NullableField<T>& value) {
  read_key(object, key, static_cast<std::optional<T>&>(value));
}
inline void write_key(nlohmann::ordered_json& object, const std::string& key, FlagField flag) {
  object[key] = flag ? 1 : 0;
}
inline void read_key(const nlohmann::ordered_json& object, const std::string& key, FlagField& flag) {
  read_flag_key(object, key, flag.value);
}
template <SpreadKeys Keys>
void write_key(nlohmann::ordered_json& object, const std::string& stem, const SpreadField<Keys>& t) {
  object[spread_key(stem, "", Keys)] = t.us;
  object[spread_key(stem, "min", Keys)] = t.min_us;
  object[spread_key(stem, "max", Keys)] = t.max_us;
}
template <SpreadKeys Keys>
void read_key(const nlohmann::ordered_json& object, const std::string& stem, SpreadField<Keys>& t) {
  read_key(object, spread_key(stem, "", Keys), t.us);
  read_key(object, spread_key(stem, "min", Keys), t.min_us);
  read_key(object, spread_key(stem, "max", Keys), t.max_us);
}
}  // namespace dlsys

// A named group of a struct's fields, each under its own name after an optional prefix, in the order listed:
//   DLSYS_VALUES_PART(Name, Type, fields...) defines
//   struct Name { static void write(json&, const Type&, prefix = ""); static void read(const json&, Type&, prefix); }
// For JSON that is not one flat list: fields written only together or only in one case, keys older recorded runs lack
// (read_if_present: the part only when its first key is there), a struct flattened into its parent under "<prefix>"
// keys.
#define DLSYS_VALUES_WRITE_ONE(field) ::dlsys::write_key(dlsys_json, dlsys_prefix + #field, dlsys_value.field);
#define DLSYS_VALUES_READ_ONE(field) ::dlsys::read_key(dlsys_json, dlsys_prefix + #field, dlsys_value.field);
#define DLSYS_VALUES_FIRST_NAME(...) DLSYS_VALUES_FIRST_NAME_(__VA_ARGS__, unused)
#define DLSYS_VALUES_FIRST_NAME_(first, ...) #first
#define DLSYS_VALUES_PART(Name, Type, ...)                                                                    \
  struct Name {                                                                                               \
    static void write(nlohmann::ordered_json& dlsys_json, const Type& dlsys_value,                            \
                      const std::string& dlsys_prefix = "") {                                                 \
      NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(DLSYS_VALUES_WRITE_ONE, __VA_ARGS__))                          \
    }                                                                                                         \
    static void read(const nlohmann::ordered_json& dlsys_json, Type& dlsys_value,                             \
                     const std::string& dlsys_prefix = "") {                                                  \
      NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(DLSYS_VALUES_READ_ONE, __VA_ARGS__))                           \
    }                                                                                                         \
    static void read_if_present(const nlohmann::ordered_json& dlsys_json, Type& dlsys_value,                  \
                                const std::string& dlsys_prefix = "") {                                       \
      if (dlsys_json.is_object() && dlsys_json.contains(dlsys_prefix + DLSYS_VALUES_FIRST_NAME(__VA_ARGS__))) \
        read(dlsys_json, dlsys_value, dlsys_prefix);                                                          \
    }                                                                                                         \
  };

namespace dlsys {
// A struct as its `Always` part's keys and then, where `present`, its `Optional` part's (keys one kind of run writes
// and another lacks, such as a GPU run's checks); read back with the optional part only when its first key is there.
template <class Always, class Optional, class Type>
void write_parts(nlohmann::ordered_json& json, const Type& value, bool present) {
  json = nlohmann::ordered_json::object();
  Always::write(json, value);
  if (present) Optional::write(json, value);
}
template <class Always, class Optional, class Type>
void read_parts(const nlohmann::ordered_json& json, Type& value) {
  value = Type{};
  Always::read(json, value);
  Optional::read_if_present(json, value);
}
}  // namespace dlsys

// Defines `to_json` for a struct of plain fields: each field under its own name, in the order listed. (nlohmann's
// NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE writes only to nlohmann::json in Debian's 3.11.2, which would lose the order.)
#define DLSYS_VALUES_TO_JSON(Type, ...)                                              \
  inline void to_json(nlohmann::ordered_json& dlsys_json, const Type& dlsys_value) { \
    const std::string dlsys_prefix;                                                  \
    dlsys_json = nlohmann::ordered_json::object();                                   \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(DLSYS_VALUES_WRITE_ONE, __VA_ARGS__))   \
  }

// The matching reader, for a recorded run opened again: each field from the key of its name (read_key), so a missing
// key or a value of the wrong kind is reported by its path.
#define DLSYS_VALUES_FROM_JSON(Type, ...)                                              \
  inline void from_json(const nlohmann::ordered_json& dlsys_json, Type& dlsys_value) { \
    const std::string dlsys_prefix;                                                    \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(DLSYS_VALUES_READ_ONE, __VA_ARGS__))      \
  }
// The reader of a struct whose fields must also agree with each other (arrays read side by side): `check(value)`
// runs once every field is read and throws JsonKeyError naming the key.
#define DLSYS_VALUES_FROM_JSON_CHECKED(Type, check, ...)                               \
  inline void from_json(const nlohmann::ordered_json& dlsys_json, Type& dlsys_value) { \
    const std::string dlsys_prefix;                                                    \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(DLSYS_VALUES_READ_ONE, __VA_ARGS__))      \
    check(dlsys_value);                                                                \
  }
// Both directions for a struct of plain fields.
#define DLSYS_VALUES_JSON(Type, ...)      \
  DLSYS_VALUES_TO_JSON(Type, __VA_ARGS__) \
  DLSYS_VALUES_FROM_JSON(Type, __VA_ARGS__)

namespace dlsys {

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
