#pragma once
// What one rank records of one forward + backward: each collective it made and the split of its time. Shared by the
// CPU ranks and the CUDA ranks (plain C++17, no CUDA header).
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/collectives/op.h"

namespace dlsys::tensor {

// One collective as a rank saw it: what, where in the layer, how big, what it cost.
struct CollectiveCall {
  collectives::Op op = collectives::Op::AllReduce;
  std::string site;             // "attention output (g)", ...
  bool backward = false;        // called in the backward pass
  std::int64_t elements = 0;    // the whole buffer the collective works on (s b h for the layer's)
  std::int64_t bytes_sent = 0;  // by this rank, counted by the links (or the copies, on GPUs)
  double time_us = 0;           // on this rank, waiting for the others included
};

// One rank's timing of one forward + backward.
struct RankStepTimes {
  double step_us = 0;     // the whole forward + backward on this rank
  double comm_us = 0;     // inside collectives, waiting for the other ranks included
  double compute_us = 0;  // the rest: GEMMs, attention, layer norms, element-wise work, local copies
  // The same split in CPU time of the rank's thread: the work itself, which does not grow when ranks outnumber the
  // cores and wait for one (wall time does). Zero for GPU ranks, whose work is not a thread's.
  double step_cpu_us = 0, comm_cpu_us = 0, compute_cpu_us = 0;
  std::vector<CollectiveCall> calls;  // in the order the rank made them
};

}  // namespace dlsys::tensor
