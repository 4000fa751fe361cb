#pragma once
// The typed lesson base. A lesson declares its types once: its parameters as a struct read once from the checked
// values (choices as enums), its closed forms (Theory), what a run measures (Measured) and what its steps draw from
// the parameters alone (StepData). From those types the base gives what every lesson needs: the theory and step data
// the GUI asks for, and the reading back of a recorded run (no table of lessons to register in). JSON is written from
// the structs' own `to_json` (engine/lesson_values.h).
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>

#include "engine/json_read.h"
#include "engine/lesson_values.h"
#include "lessons/common/lesson.h"
#include "lessons/common/run_budget.h"

namespace dlsys {

// One section of a recorded run ("theory" or "measured") as the struct T; an empty object stands for no values (a
// run that measured nothing). Throws JsonKeyError with the key's path under `section`.
template <class T>
std::shared_ptr<const LessonValues> read_values_section(const nlohmann::ordered_json& json, const char* section) {
  if (json.is_object() && json.empty()) return nullptr;
  T value{};
  try {
    read_value(json, value);
  } catch (const JsonKeyError& e) {
    throw e.within(section);
  }
  return make_values(std::move(value));
}

// A lesson whose theory and measured values are the structs Theory and Measured: a recorded run reads back as them.
template <class Theory, class Measured>
class LessonWithValues : public Lesson {
 public:
  using TheoryValues = Theory;
  using MeasuredValues = Measured;
  void read_values(const nlohmann::ordered_json& theory, const nlohmann::ordered_json& measured,
                   RunResult& result) const override {
    result.theory = read_values_section<Theory>(theory, "theory");
    result.measured = read_values_section<Measured>(measured, "measured");
  }
};

// The whole contract. The lesson implements read_params (the one place its parameters are read by key), theory_of,
// run_with and, where they apply, check_params (checks across parameters, what the backend cannot run), budget_of
// (what a run needs of the machine) and step_data_of (what the steps draw beyond the parameters and the run); the base
// answers the untyped questions with them.
template <class Params, class Theory, class Measured, class Steps = StepData>
class TypedLesson : public LessonWithValues<Theory, Measured> {
 public:
  using ParamsType = Params;
  using StepsType = Steps;
  virtual Params read_params(const ParamValues& values) const = 0;
  virtual Theory theory_of(const Params& params) const = 0;
  virtual RunResult run_with(const Params& params, RunContext& context) const = 0;
  virtual void check_params(const Params&, BackendKind) const {}
  virtual RunBudget budget_of(const Params&, BackendKind) const { return {}; }
  virtual std::shared_ptr<const Steps> step_data_of(const Params&) const { return nullptr; }
  // A lesson that draws without a run (the pipeline lessons export their simulated schedule) refuses what only a run
  // needs just before a run: its budget and check_run (the cores or GPUs a run takes) then wait for
  // check_run_resources.
  virtual bool budget_only_before_run() const { return false; }
  virtual void check_run(const Params&, BackendKind) const {}

  std::shared_ptr<const LessonValues> theory(const ParamValues& values) const final {
    return make_values(theory_of(read_params(values)));
  }
  std::shared_ptr<const StepData> step_data(const ParamValues& values) const final {
    return step_data_of(read_params(values));
  }
  // Refused before any run starts and as the GUI's parameters change, so the budget is part of validate.
  void validate(const ParamValues& values, BackendKind backend) const final {
    const Params params = read_params(values);
    check_params(params, backend);
    if (!budget_only_before_run()) refuse_what_does_not_fit(budget_of(params, backend), backend);
  }
  void check_run_resources(const ParamValues& values, BackendKind backend) const override {
    const Params params = read_params(values);
    check_run(params, backend);
    if (budget_only_before_run()) refuse_what_does_not_fit(budget_of(params, backend), backend);
  }
  RunResult run(RunContext& context) const final { return run_with(read_params(context.params), context); }
};

}  // namespace dlsys

// The overrides a typed lesson defines in its .cpp, each signature written once: inside the class of a lesson deriving
// from TypedLesson, DLSYS_LESSON_OVERRIDES(params, read_params, theory_of, run_with, ...) declares those listed, in
// the base's names for the lesson's types (ParamsType, TheoryValues, StepsType).
#define DLSYS_LESSON_OVERRIDE_params std::vector<ParamSpec> params() const override;
#define DLSYS_LESSON_OVERRIDE_read_params ParamsType read_params(const ParamValues& values) const override;
#define DLSYS_LESSON_OVERRIDE_theory_of TheoryValues theory_of(const ParamsType& params) const override;
#define DLSYS_LESSON_OVERRIDE_check_params \
  void check_params(const ParamsType& params, BackendKind backend) const override;
#define DLSYS_LESSON_OVERRIDE_check_run void check_run(const ParamsType& params, BackendKind backend) const override;
#define DLSYS_LESSON_OVERRIDE_budget_of \
  RunBudget budget_of(const ParamsType& params, BackendKind backend) const override;
#define DLSYS_LESSON_OVERRIDE_step_data_of \
  std::shared_ptr<const StepsType> step_data_of(const ParamsType& params) const override;
#define DLSYS_LESSON_OVERRIDE_run_with RunResult run_with(const ParamsType& params, RunContext& context) const override;
#define DLSYS_LESSON_OVERRIDE_text_report std::string text_report(const RunResult& result) const override;
#define DLSYS_LESSON_OVERRIDE_ONE(name) DLSYS_LESSON_OVERRIDE_##name
#define DLSYS_LESSON_OVERRIDES(...) NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(DLSYS_LESSON_OVERRIDE_ONE, __VA_ARGS__))
