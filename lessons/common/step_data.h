#pragma once
// What a lesson's steps show before (and beside) a run, computed from the parameters alone: traces, the ring's
// step record, simulated schedules, sizing tables. Each lesson derives its own struct, and its views read it by
// name; views compute nothing of their own.
namespace dlsys {

struct StepData {
  virtual ~StepData() = default;
};

}  // namespace dlsys
