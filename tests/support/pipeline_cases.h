#pragma once
// The schedule shapes both executors (CPU and CUDA) are checked on: every kind, odd sizes, one device, a run with
// fewer micro-batches than stages, and interleaving with v = 3.
#include <vector>

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

}  // namespace dlsys::testing
