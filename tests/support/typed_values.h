#pragma once
// A lesson's typed values in tests: its parameters read as the lesson reads them, its theory from assignments, and a
// run's measured struct. Tests read fields by name through these, never JSON keys.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "engine/params.h"
#include "engine/run_result.h"

namespace dlsys::test {

// The lesson's parameters struct after its defaults and `sets` ("key=value").
template <class L>
typename L::ParamsType typed_params(const L& lesson, const std::vector<std::string>& sets) {
  return lesson.read_params(ParamValues::parse(lesson.params(), sets));
}

// The lesson's Theory struct for its defaults and `sets`.
template <class L>
typename L::TheoryValues typed_theory(const L& lesson, const std::vector<std::string>& sets) {
  return lesson.theory_of(typed_params(lesson, sets));
}

// The run's measured values as T; fails the test when the run holds none or another type.
template <class T>
const T& measured_of(const RunResult& result) {
  const T* measured = result.measured_as<T>();
  REQUIRE(measured != nullptr);
  return *measured;
}

}  // namespace dlsys::test
