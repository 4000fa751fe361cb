#pragma once
// What the allreduce lesson's steps draw before a run: the real ring's step record for the ranks shown with a caption
// per row, what each way of summing costs, and the cost step's formulas, all built from the parameters.
#include <memory>
#include <string>
#include <vector>

#include "engine/run_result.h"
#include "kernels/collectives/step_record.h"
#include "lessons/allreduce/allreduce_labels.h"
#include "lessons/allreduce/allreduce_params.h"
#include "lessons/common/step_data.h"

namespace dlsys::allreduce {

// One way to all-reduce against N = 2 .. 16, in units of S: bytes sent by the busiest rank, and steps in a row.
struct WayLine {
  std::string bytes_name;  // the legends' words, with the formula each plot shows
  std::string steps_name;
  std::vector<SeriesPoint> bytes_over_s;
  std::vector<SeriesPoint> steps;
};

struct AllreduceSteps final : StepData {
  int n_ranks = 0;        // the parameter N
  int n_ranks_shown = 0;  // the step-through draws 2 to kMaxRanksShown ranks
  double message_bytes = 0;
  collectives::CollectiveRecord ring_record;  // the real ring run on n_ranks_shown ranks, one number per chunk
  std::vector<std::string> ring_captions;     // one per row of ring_record

  std::vector<WayLine> ways;  // through rank 0, full exchange, direct reduce-scatter + all-gather, ring
  std::vector<std::string> ways_headers;
  std::vector<std::vector<std::string>> ways_rows;  // at N and S

  // The five all-reduces by their closed forms at N and S, with the steps a small real run of each logged.
  std::vector<std::string> algorithms_headers;
  std::vector<std::vector<std::string>> algorithms_rows;
  int power_of_two = 0;  // the largest power of two at most N (the fold-in's p)

  std::string op_title;             // "all-reduce", "reduce-scatter", "all-gather"
  std::string algo;                 // ring, naive or library
  std::vector<LabelRow> cost_rows;  // the cost step's formulas and values, for the op and algorithm chosen
};

inline constexpr int kMaxRanksShown = 8;

std::shared_ptr<const AllreduceSteps> make_steps(const AllreduceParams& params);

}  // namespace dlsys::allreduce
