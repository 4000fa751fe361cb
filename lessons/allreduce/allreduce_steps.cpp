#include "lessons/allreduce/allreduce_steps.h"

#include <algorithm>

namespace dlsys::allreduce {

using collectives::Algorithm;
using collectives::collective_cost;
using collectives::Op;

std::shared_ptr<const AllreduceSteps> make_steps(const ParamValues& params, const collectives::CollectiveCost& chosen) {
  auto steps = std::make_shared<AllreduceSteps>();
  steps->n_ranks = static_cast<int>(params.integer("n"));
  steps->n_ranks_shown = std::clamp(steps->n_ranks, 2, kMaxRanksShown);
  steps->message_bytes = params.real("bytes");
  // The ring itself, run on small buffers: what the step-through shows is what the timed code does.
  steps->ring_record = collectives::record_ring_allreduce(steps->n_ranks_shown, steps->n_ranks_shown);
  for (int n = 2; n <= 16; ++n)
    steps->link_bytes.push_back({n, collective_cost(Op::AllReduce, Algorithm::Naive, n, 1).model_bytes, double(n - 1),
                                 collective_cost(Op::AllReduce, Algorithm::Ring, n, 1).bytes_sent_per_rank});
  const int n = steps->n_ranks;
  const double s = steps->message_bytes;
  steps->root_bytes = collective_cost(Op::AllReduce, Algorithm::Naive, n, s).model_bytes;
  steps->everyone_bytes = (n - 1) * s;
  steps->ring_bytes = collective_cost(Op::AllReduce, Algorithm::Ring, n, s).bytes_sent_per_rank;
  steps->steps = chosen.steps;
  steps->bytes_sent_per_rank = chosen.bytes_sent_per_rank;
  steps->busbw_factor = chosen.busbw_factor;
  return steps;
}

}  // namespace dlsys::allreduce
