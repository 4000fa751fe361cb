#pragma once
// A lesson's theory or measured values as its own typed struct. Its view, its text report and its tests read the
// struct's fields by name, so a misspelt value fails to compile; JSON (and the CSV made from it) is only an export
// format, written from the struct by a `to_json(nlohmann::ordered_json&, const T&)` found next to T.
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>

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

}  // namespace dlsys
