#pragma once
// What the allreduce lesson's steps draw before a run: the real ring's step record for the ranks shown, and the
// bytes each way of summing costs, from the closed forms.
#include <memory>
#include <vector>

#include "engine/params.h"
#include "kernels/collectives/cost_model.h"
#include "kernels/collectives/step_record.h"
#include "lessons/common/step_data.h"

namespace dlsys::allreduce {

struct LinkBytesPoint {
  int n_ranks = 0;
  double through_root = 0;     // rank 0's link, in and out, in units of S
  double everyone_to_all = 0;  // each rank, one way
  double ring = 0;             // each rank, sent
};

struct AllreduceSteps final : StepData {
  int n_ranks = 0;        // the parameter N
  int n_ranks_shown = 0;  // the step-through draws 2 to kMaxRanksShown ranks
  double message_bytes = 0;
  collectives::CollectiveRecord ring_record;  // the real ring run on n_ranks_shown ranks, one number per chunk
  std::vector<LinkBytesPoint> link_bytes;     // N = 2 .. 16
  double root_bytes = 0, everyone_bytes = 0, ring_bytes = 0;  // at N and S
  int steps = 0;                                              // the cost step's closed forms at N and S
  double bytes_sent_per_rank = 0;
  double busbw_factor = 0;
};

inline constexpr int kMaxRanksShown = 8;

// `chosen` is the cost of the chosen operation and algorithm at N and S (the lesson's theory).
std::shared_ptr<const AllreduceSteps> make_steps(const ParamValues& params, const collectives::CollectiveCost& chosen);

}  // namespace dlsys::allreduce
