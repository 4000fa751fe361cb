#pragma once
// The allreduce lesson's parameters as read once from the checked values (the specs are in allreduce_lesson.cpp).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/collectives/op.h"
#include "lessons/common/process_placement.h"

namespace dlsys::allreduce {

// Who sums, in the order of kAlgoChoices: one of the lab's own algorithms, or the library (NCCL, on GPUs).
enum class Algo { Ring, Naive, Library, RecursiveDoubling, Rabenseifner, Direct };
inline const std::vector<std::string> kAlgoChoices = {"ring",         "naive", "library", "recursive_doubling",
                                                      "rabenseifner", "direct"};
// The collectives in the order of collectives::Op.
inline const std::vector<std::string> kOpChoices = {"allreduce", "reduce_scatter", "all_gather"};

inline const std::string& algo_name(Algo algo) { return kAlgoChoices[static_cast<std::size_t>(algo)]; }
// The lab's algorithm; none for the library.
inline std::optional<collectives::Algorithm> lab_algorithm(Algo algo) {
  return collectives::algorithm_from_name(algo_name(algo));
}
// The all-reduces from Thakur, Rabenseifner and Gropp 2005 beside the ring and the naive way: over a link per pair of
// CPU ranks, all-reduce only.
inline bool is_crossbar(Algo algo) {
  return algo == Algo::RecursiveDoubling || algo == Algo::Rabenseifner || algo == Algo::Direct;
}

struct AllreduceParams {
  int n = 0;           // ranks
  std::string n_text;  // n as written, for the message that compares it with the MPI world
  double bytes = 0;    // the chosen message size S per rank
  std::string bytes_text;
  Algo algo = Algo::Ring;
  collectives::Op op = collectives::Op::AllReduce;
  std::vector<double> sizes;  // the sweep's message sizes
  std::string sizes_text;
  int repeats = 0;
  double segment_bytes = 0;  // the pipeline's segment
  std::string segment_text;
  Launcher launcher = Launcher::Threads;
  double max_minutes = 0;  // the run's limit

  // The largest message the run makes: S or the sweep's largest.
  double max_size_bytes() const {
    double largest = bytes;
    for (double s : sizes) largest = std::max(largest, s);
    return largest;
  }
};

}  // namespace dlsys::allreduce
