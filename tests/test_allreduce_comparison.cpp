// The comparison of all-reduce algorithms from given times: each one's own fit, the crossover predicted from the
// closed forms with the ring's fit, and the measured one.
#include <doctest/doctest.h>

#include "kernels/collectives/cost_model.h"
#include "lessons/allreduce/algorithm_comparison.h"
#include "lessons/allreduce/allreduce_labels.h"

using namespace dlsys;
using namespace dlsys::allreduce;
using collectives::Algorithm;
using collectives::Op;

namespace {

// Exact alpha-beta times for `algorithm` at N = 4, alpha 5 us, beta 2 GB/s.
AlgorithmPoints model_points(Algorithm algorithm, const std::vector<double>& sizes) {
  AlgorithmPoints points{algorithm, {}};
  for (double bytes : sizes) {
    SizePoint p;
    p.bytes = bytes;
    const double t = collectives::model_time_us(collectives::collective_cost(Op::AllReduce, algorithm, 4, bytes), 5, 2);
    p.time.median_us = p.time.min_us = p.time.max_us = t;
    p.bytes_sent_max_rank = collectives::collective_cost(Op::AllReduce, algorithm, 4, bytes).bytes_sent_per_rank;
    points.sweep.push_back(p);
  }
  return points;
}

}  // namespace

TEST_CASE("comparison: exact model times give back alpha and beta, and both crossovers at 8 alpha beta") {
  std::vector<double> sizes;
  for (double s = 1024; s <= 16 << 20; s *= 2) sizes.push_back(s);
  std::vector<AlgorithmPoints> runs;
  for (Algorithm a : kComparedAlgorithms) runs.push_back(model_points(a, sizes));
  const AlgorithmComparison c = summarize_comparison(4, runs);
  REQUIRE(c.algorithms.size() == 5);
  for (const AlgorithmRun& a : c.algorithms) {
    INFO(a.algo);
    REQUIRE(a.alpha_us.has_value());
    CHECK(*a.alpha_us == doctest::Approx(5));
    CHECK(*a.beta_gbps == doctest::Approx(2));
    CHECK(a.wrong == 0);
    CHECK(a.bytes_sent_counted == a.bytes_sent_per_rank);
  }
  // S* = 8 alpha beta = 8 x 5 us x 2e3 bytes/us = 80,000 bytes; the first swept size above it is 128 KiB.
  REQUIRE(c.crossover_predicted_bytes.has_value());
  CHECK(*c.crossover_predicted_bytes == doctest::Approx(80000));
  REQUIRE(c.crossover_measured_bytes.has_value());
  CHECK(*c.crossover_measured_bytes == 131072);
  CHECK(c.crossover_sentence ==
        "Ring overtakes recursive doubling: predicted at 78.12 KiB (ring = recursive doubling with the ring's fitted "
        "alpha 5.0 us and beta 2.00 GB/s); measured at 128 KiB (the first swept size from which on the ring was "
        "faster).");
  // One busbw series per algorithm, stable ids.
  const auto series = comparison_series(c, 4);
  REQUIRE(series.size() == 7);
  CHECK(series[0].id == "busbw_model_ring");
  CHECK(series[1].id == "busbw_model_recursive_doubling");
  CHECK(series[2].id == "busbw_algo_ring");
  CHECK(series[3].id == "busbw_algo_recursive_doubling");
  CHECK(series[6].id == "busbw_algo_naive");
  // Exact times: the model curves lie on the measured ones.
  for (std::size_t i = 0; i < series[0].points.size(); ++i) {
    CHECK(series[0].points[i].y == doctest::Approx(series[2].points[i].y));
    CHECK(series[1].points[i].y == doctest::Approx(series[3].points[i].y));
  }
}

TEST_CASE("comparison: a noisy small size where the ring wins is not the measured crossover") {
  const std::vector<double> sizes{1024, 2048, 4096, 8192};
  AlgorithmPoints ring{Algorithm::Ring, {}}, rd{Algorithm::RecursiveDoubling, {}};
  const double ring_us[] = {5, 30, 30, 10}, rd_us[] = {10, 10, 10, 20};  // ring faster at 1 KiB, then from 8 KiB on
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    SizePoint a, b;
    a.bytes = b.bytes = sizes[i];
    a.time.median_us = ring_us[i];
    b.time.median_us = rd_us[i];
    ring.sweep.push_back(a);
    rd.sweep.push_back(b);
  }
  const AlgorithmComparison c = summarize_comparison(4, {ring, rd});
  REQUIRE(c.crossover_measured_bytes.has_value());
  CHECK(*c.crossover_measured_bytes == 8192);
}

TEST_CASE("comparison table and cost labels of the crossbar algorithms, N = 6 folds 2 ranks in") {
  const auto rows = algorithms_rows(6, 1e6);
  REQUIRE(rows.size() == 5);
  CHECK(rows[1] == std::vector<std::string>{"recursive_doubling", "log2 p + 2 = 4", "3", "log2 p x S + S = 3 MB", "4"});
  CHECK(rows[2] == std::vector<std::string>{"rabenseifner", "2 log2 p + 2 = 6", "5", "2(p-1)/p x S + S = 2.5 MB", "6"});
  CHECK(rows[3][4] == "10");  // direct: 2(N-1) steps logged
  CHECK(rows[0][4] == "10");  // the ring's own record
  CHECK(rows[4][4] == "10");  // naive: rank 0 takes 5 in, then sends 5 out
  const auto labels = cost_labels(Op::AllReduce, "rabenseifner", 6, 1e6);
  REQUIRE(labels.size() == 5);
  CHECK(labels[0].label == "steps  2 log2 N, N = 6: N not a power of two: + 2 for the fold-in");
  CHECK(labels[0].value == "6");
  CHECK(labels[2].label == "bytes on the critical path  the above + S in for the fold-in");
  CHECK(labels[3].value == "t = 6 alpha + 3.5 MB / beta");
}
