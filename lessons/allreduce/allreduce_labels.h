#pragma once
// The words and numbers the allreduce steps show, built from the parameters so that they always name the collective
// and the algorithm chosen: the cost step's formulas with their values, the comparison of the ways to sum, and the
// ring's step captions. Steps are counted from 1 on screen (step k = 1 .. N-1 of each phase); the code's schedule
// (ring_schedule.h) counts s = k - 1 from 0.
#include <string>
#include <vector>

#include "kernels/collectives/op.h"
#include "kernels/collectives/step_record.h"

namespace dlsys::allreduce {

struct LabelRow {
  std::string label;  // the quantity and its formula: "steps  2(N-1), N = 4"
  std::string value;  // its value at the parameters: "6"
};

// "all-reduce", "reduce-scatter", "all-gather".
std::string op_title(collectives::Op op);

// The cost step's table for `op` run with `algo` (ring, naive or library) over n ranks of `bytes` each: steps, bytes
// sent by the busiest rank, the bytes the alpha-beta model charges, the model itself and the busbw factor.
std::vector<LabelRow> cost_labels(collectives::Op op, const std::string& algo, int n, double bytes);

// The comparison of the ways to all-reduce at n ranks and `bytes`: one row per way, cells way, links, steps, bytes
// sent by the busiest rank (formulas with their values).
std::vector<std::string> ways_headers();
std::vector<std::vector<std::string>> ways_rows(int n, double bytes);

// What a row of the ring's record shows, for the step-through: "reduce-scatter step k = 2 of 3: rank r sends chunk
// (r - k + 1) mod N = (r - 1) mod 4 to rank r + 1, which adds it".
std::string ring_caption(const collectives::RingStep& step, int n_ranks);

}  // namespace dlsys::allreduce
