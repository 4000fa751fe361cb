#pragma once
// Turns the sizes a bench measured into the lesson's typed measured values and series: busbw and algbw per size
// (nccl-tests' table), the copy ceiling beside them, the alpha-beta fit, and the caveats the measured step must show
// (ranks sharing cores, a point above its ceiling, samples spread by another process).
#include <string>
#include <vector>

#include "engine/run_result.h"
#include "kernels/collectives/cost_model.h"
#include "lessons/allreduce/allreduce_values.h"
#include "lessons/allreduce/bench.h"

namespace dlsys::allreduce {

struct RunPoints {
  collectives::Op op = collectives::Op::AllReduce;
  collectives::Algorithm model_algorithm = collectives::Algorithm::Ring;  // whose counts the model uses
  int n_ranks = 1;
  int repeats = 1;
  int hardware_threads = 0;  // the CPU ranks' (0: ranks on GPUs)
  std::vector<SizePoint> sweep;
  SizePoint chosen;  // at the parameter `bytes`
};

struct RunSummary {
  AllreduceMeasured measured;
  std::vector<Series> series;
  std::vector<std::string> notes;  // for the run's notes (the fit's limits)
};

RunSummary summarize_run(const RunPoints& points);

}  // namespace dlsys::allreduce
