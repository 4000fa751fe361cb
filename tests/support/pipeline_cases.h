#pragma once
// The schedule shapes both executors (CPU and CUDA) are checked on: every kind, odd sizes, one device, a run with
// fewer micro-batches than stages, and interleaving with v = 3; and what either executor's result must show.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "kernels/pipeline/executor.h"
#include "kernels/pipeline/schedule.h"

namespace dlsys::testing {

struct PipelineCase {
  pipeline::ScheduleKind kind;
  int p, m, v;
};

inline const std::vector<PipelineCase>& executor_cases() {
  using pipeline::ScheduleKind;
  static const std::vector<PipelineCase> cases = {
      {ScheduleKind::GPipe, 3, 5, 1},       {ScheduleKind::OneFOneB, 4, 6, 1},  {ScheduleKind::OneFOneB, 3, 2, 1},
      {ScheduleKind::Interleaved, 2, 4, 3}, {ScheduleKind::ZbH1, 4, 5, 1},      {ScheduleKind::DualPipe, 4, 8, 1},
      {ScheduleKind::DualPipe, 2, 6, 1},    {ScheduleKind::DualPipeV, 3, 7, 1}, {ScheduleKind::OneFOneB, 1, 3, 1},
  };
  return cases;
}

// An executed schedule `s` (p devices): gradients within 1e-4 of the reference, a timing the schedule allows (spans
// within `tolerance_us`), a bubble in [0, 1), measured F durations, and on each device a peak stash of at least its
// in-flight micro-batches' inputs and relu outputs.
inline void check_executed(const pipeline::Schedule& s, int p, const pipeline::ExecutorConfig& config,
                           const pipeline::ExecutionResult& r, double tolerance_us) {
  CHECK(r.grad_max_rel_err < 1e-4);
  const auto problems = pipeline::check_timing(s, r.timing, 0.0, tolerance_us);
  CHECK_MESSAGE(problems.empty(), (problems.empty() ? "" : problems.front()));
  CHECK(r.timing.makespan > 0);
  CHECK(r.timing.bubble_fraction() >= 0);
  CHECK(r.timing.bubble_fraction() < 1);
  CHECK(r.durations.f_us > 0);
  REQUIRE(r.peak_activation_bytes.size() == std::size_t(p));
  // Each device stashes at least its peak in-flight micro-batches' inputs and relu outputs.
  const std::int64_t per_block_bytes = 2ll * config.microbatch_rows * config.hidden * 4;
  for (int d = 0; d < p; ++d)
    CHECK(r.peak_activation_bytes[d] >= pipeline::in_flight(r.timing, d).peak * per_block_bytes);
}

}  // namespace dlsys::testing
