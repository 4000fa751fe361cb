#include "lessons/allreduce/allreduce_steps.h"

#include <algorithm>

#include "kernels/collectives/collective_algorithms.h"
#include "kernels/collectives/cost_model.h"
#include "lessons/allreduce/algorithm_comparison.h"

namespace dlsys::allreduce {

using collectives::AllReduceWay;

namespace {

std::vector<WayLine> way_lines() {
  struct Way {
    AllReduceWay way;
    const char* bytes_name;
    const char* steps_name;
  };
  static const Way ways[] = {
      {AllReduceWay::ThroughRoot, "through rank 0: (N-1) x S", "through rank 0: 2(N-1)"},
      {AllReduceWay::FullExchange, "full exchange: (N-1) x S", "full exchange: 1"},
      {AllReduceWay::DirectPairs, "direct: 2(N-1)/N x S", "direct: 2"},
      {AllReduceWay::Ring, "ring: 2(N-1)/N x S", "ring: 2(N-1)"},
  };
  std::vector<WayLine> lines;
  for (const Way& w : ways) {
    WayLine line{w.bytes_name, w.steps_name, {}, {}};
    for (int n = 2; n <= 16; ++n) {
      const collectives::WayCost c = collectives::all_reduce_way_cost(w.way, n, 1.0);
      line.bytes_over_s.push_back(
          {double(n), c.bytes_sent_busiest_rank, c.bytes_sent_busiest_rank, c.bytes_sent_busiest_rank});
      line.steps.push_back({double(n), double(c.steps), double(c.steps), double(c.steps)});
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace

std::shared_ptr<const AllreduceSteps> make_steps(const AllreduceParams& params) {
  auto steps = std::make_shared<AllreduceSteps>();
  steps->n_ranks = params.n;
  steps->n_ranks_shown = std::clamp(steps->n_ranks, 2, kMaxRanksShown);
  steps->message_bytes = params.bytes;
  // The ring itself, run on small buffers: what the step-through shows is what the timed code does.
  steps->ring_record = collectives::record_ring_allreduce(steps->n_ranks_shown, steps->n_ranks_shown);
  for (const collectives::RingStep& row : steps->ring_record.steps)
    steps->ring_captions.push_back(ring_caption(row, steps->n_ranks_shown));
  steps->ways = way_lines();
  steps->ways_headers = ways_headers();
  steps->ways_rows = ways_rows(steps->n_ranks, steps->message_bytes);
  steps->algorithms_headers = algorithms_headers();
  steps->algorithms_rows = algorithms_rows(steps->n_ranks, steps->message_bytes);
  steps->power_of_two = collectives::power_of_two_below(steps->n_ranks);
  steps->op_title = op_title(params.op);
  steps->algo = algo_name(params.algo);
  steps->cost_rows = cost_labels(params.op, steps->algo, steps->n_ranks, steps->message_bytes);
  return steps;
}

}  // namespace dlsys::allreduce
