// Recursive doubling, Rabenseifner and direct all-reduce: results element by element against the reference, and the
// steps and bytes each rank logs as it runs against the closed forms of cost_model.h.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "kernels/collectives/collective_algorithms.h"
#include "kernels/collectives/cost_model.h"
#include "kernels/collectives/reference.h"

using namespace dlsys;
using namespace dlsys::collectives;

namespace {

const Algorithm kNewAlgorithms[] = {Algorithm::RecursiveDoubling, Algorithm::Rabenseifner, Algorithm::Direct};

std::vector<std::vector<float>> reference_inputs(int n, std::int64_t count) {
  std::vector<std::vector<float>> inputs(n, std::vector<float>(static_cast<std::size_t>(count)));
  for (int r = 0; r < n; ++r) fill_inputs(inputs[r].data(), r, count, 1);
  return inputs;
}

}  // namespace

TEST_CASE("recursive doubling, rabenseifner and direct equal the reference for N = 1..8 and awkward sizes") {
  const std::int64_t counts[] = {0, 1, 2, 3, 5, 7, 13, 64, 100, 1001};
  for (int n = 1; n <= 8; ++n)
    for (std::int64_t count : counts)
      for (Algorithm algorithm : kNewAlgorithms)
        for (std::int64_t segment_bytes : {std::int64_t{8}, std::int64_t{256 << 10}}) {
          INFO("n=", n, " count=", count, " algo=", algorithm_name(algorithm), " segment=", segment_bytes);
          std::vector<std::vector<float>> outputs;
          log_allreduce(algorithm, reference_inputs(n, count), &outputs, segment_bytes);
          std::vector<float*> recv;
          for (auto& out : outputs) recv.push_back(out.data());
          CHECK(count_wrong(Op::AllReduce, recv, count, 1) == 0);
        }
}

TEST_CASE("in place (send = recv) works too, and the timed path through run_collective agrees") {
  for (int n : {3, 4, 6})
    for (Algorithm algorithm : kNewAlgorithms) {
      const std::int64_t count = 517;
      MemoryLedger ledger;
      Communicator comm(n, ledger, CommOptions{.segment_bytes = 64, .full_mesh = true});
      std::vector<std::vector<float>> buffers = reference_inputs(n, count);
      RankBuffers b{{}, {}, count};
      for (auto& buffer : buffers) {
        b.send.push_back(buffer.data());
        b.recv.push_back(buffer.data());
      }
      run_collective(comm, Op::AllReduce, algorithm, b);
      INFO("n=", n, " algo=", algorithm_name(algorithm));
      CHECK(count_wrong(Op::AllReduce, b.recv, count, 1) == 0);
    }
}

TEST_CASE("without a link between every pair the new algorithms refuse to run") {
  MemoryLedger ledger;
  Communicator comm(4, ledger);
  std::vector<std::vector<float>> buffers = reference_inputs(4, 8);
  RankBuffers b{{}, {}, 8};
  for (auto& buffer : buffers) {
    b.send.push_back(buffer.data());
    b.recv.push_back(buffer.data());
  }
  CHECK_THROWS(run_collective(comm, Op::AllReduce, Algorithm::Direct, b));
}

TEST_CASE("the logged steps, messages and bytes of the busiest rank equal the closed forms") {
  for (int n = 1; n <= 8; ++n)
    for (Algorithm algorithm :
         {Algorithm::RecursiveDoubling, Algorithm::Rabenseifner, Algorithm::Direct, Algorithm::Naive}) {
      const std::int64_t count = 840;  // divisible by 1..8, so every chunk and half is exact
      const double bytes = count * 4.0;
      const MessageLog log = log_allreduce(algorithm, reference_inputs(n, count));
      const CollectiveCost cost = collective_cost(Op::AllReduce, algorithm, n, bytes);
      INFO("n=", n, " algo=", algorithm_name(algorithm));
      CHECK(log.max_steps() == cost.steps);
      CHECK(log.max_messages_sent() == cost.messages_sent);
      CHECK(double(log.max_bytes_sent()) == cost.bytes_sent_per_rank);
    }
}

TEST_CASE("the closed forms, exactly") {
  const double s = 1 << 20;
  struct Expected {
    Algorithm algorithm;
    int n;
    int steps;
    double model_bytes;
  };
  const Expected all_reduce[] = {
      // N = 8, a power of two: log2 N = 3.
      {Algorithm::RecursiveDoubling, 8, 3, 3 * s},
      {Algorithm::Rabenseifner, 8, 6, 2.0 * 7 / 8 * s},
      {Algorithm::Direct, 8, 14, 2.0 * 7 / 8 * s},
      {Algorithm::Ring, 8, 14, 2.0 * 7 / 8 * s},
      // N = 6: p = 4, the fold-in adds 2 steps and S in, S out on the critical path.
      {Algorithm::RecursiveDoubling, 6, 4, 4 * s},
      {Algorithm::Rabenseifner, 6, 6, 1.5 * s + 2 * s},
  };
  for (const Expected& e : all_reduce) {
    INFO("n=", e.n, " algo=", algorithm_name(e.algorithm));
    const CollectiveCost cost = collective_cost(Op::AllReduce, e.algorithm, e.n, s);
    CHECK(cost.steps == e.steps);
    CHECK(cost.model_bytes == e.model_bytes);
  }
  const CollectiveCost rd = collective_cost(Op::AllReduce, Algorithm::RecursiveDoubling, 8, s);
  const CollectiveCost ring = collective_cost(Op::AllReduce, Algorithm::Ring, 8, s);
  CHECK(rd.bytes_sent_per_rank == 3 * s);
  CHECK(collective_cost(Op::AllReduce, Algorithm::RecursiveDoubling, 6, s).bytes_sent_per_rank == 3 * s);
  // Alpha-beta times: 2 us per step, 10 GB/s (1e4 bytes per us).
  CHECK(model_time_us(rd, 2, 10) == doctest::Approx(3 * 2 + 3 * s / 1e4));
  CHECK(model_time_us(ring, 2, 10) == doctest::Approx(14 * 2 + 1.75 * s / 1e4));
  CHECK_THROWS(collective_cost(Op::ReduceScatter, Algorithm::Rabenseifner, 4, s));
}

TEST_CASE("the crossover between the ring and recursive doubling solves t_ring = t_rd") {
  // N = 4: ring 6 alpha + 1.5 S / beta, recursive doubling 2 alpha + 2 S / beta: S* = 8 alpha beta.
  const auto s = crossover_bytes(Op::AllReduce, Algorithm::Ring, Algorithm::RecursiveDoubling, 4, 5.0, 2.0);
  REQUIRE(s.has_value());
  CHECK(*s == doctest::Approx(8 * 5.0 * 2.0 * 1e3));
  const CollectiveCost ring = collective_cost(Op::AllReduce, Algorithm::Ring, 4, *s);
  const CollectiveCost rd = collective_cost(Op::AllReduce, Algorithm::RecursiveDoubling, 4, *s);
  CHECK(model_time_us(ring, 5, 2) == doctest::Approx(model_time_us(rd, 5, 2)));
  // N = 2: the same bytes, recursive doubling one step fewer: it is never slower, so no crossover.
  CHECK_FALSE(crossover_bytes(Op::AllReduce, Algorithm::Ring, Algorithm::RecursiveDoubling, 2, 5.0, 2.0).has_value());
}
