#pragma once
// The comparison of the five all-reduces on CPU ranks: each one's sweep with its own alpha-beta fit, busbw series per
// algorithm (ids busbw_algo_<algo>; the model's busbw_model_ring and busbw_model_recursive_doubling first), and where
// the ring overtakes recursive doubling, predicted from the closed forms with the ring's fitted alpha and beta and
// measured as the first swept size from which on the ring was faster at every larger size.
#include <utility>
#include <vector>

#include "engine/run_result.h"
#include "kernels/collectives/op.h"
#include "lessons/allreduce/allreduce_values.h"
#include "lessons/allreduce/bench.h"

namespace dlsys::allreduce {

// In the order the lesson runs and shows them.
inline constexpr collectives::Algorithm kComparedAlgorithms[] = {
    collectives::Algorithm::Ring, collectives::Algorithm::RecursiveDoubling, collectives::Algorithm::Rabenseifner,
    collectives::Algorithm::Direct, collectives::Algorithm::Naive};

struct AlgorithmPoints {
  collectives::Algorithm algorithm = collectives::Algorithm::Ring;
  std::vector<SizePoint> sweep;  // the lesson's sweep sizes, in order
};

AlgorithmComparison summarize_comparison(int n_ranks, const std::vector<AlgorithmPoints>& runs);
std::vector<Series> comparison_series(const AlgorithmComparison& comparison, int n_ranks);

// The closed-form table of the algorithms at n ranks and `bytes`, with the steps each one logged in a small real run
// (n <= kComparisonMaxRanks): headers, then one row per algorithm.
std::vector<std::string> algorithms_headers();
std::vector<std::vector<std::string>> algorithms_rows(int n, double bytes);

}  // namespace dlsys::allreduce
