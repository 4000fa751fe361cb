#include <doctest/doctest.h>

#include <thread>
#include <vector>

#include "kernels/collectives/collectives.h"
#include "kernels/collectives/copy_probe.h"
#include "kernels/collectives/cost_model.h"
#include "kernels/collectives/reference.h"
#include "kernels/collectives/step_record.h"

using namespace dlsys;
using namespace dlsys::collectives;

namespace {

// Runs one collective on fresh buffers filled with the reference inputs and returns the wrong-element count.
std::int64_t run_and_count_wrong(int n, std::int64_t count, Op op, Algorithm algorithm, bool in_place,
                                 std::int64_t segment_bytes, std::vector<std::int64_t>* bytes_sent = nullptr) {
  MemoryLedger ledger;
  Communicator comm(n, ledger, CommOptions{.segment_bytes = segment_bytes});
  std::vector<std::vector<float>> send(n, std::vector<float>(count)), recv(n, std::vector<float>(count, -1000.0f));
  RankBuffers buffers{{}, {}, count};
  for (int r = 0; r < n; ++r) {
    fill_inputs(send[r].data(), r, count, 1);
    buffers.send.push_back(send[r].data());
    buffers.recv.push_back(in_place ? send[r].data() : recv[r].data());
  }
  run_collective(comm, op, algorithm, buffers);
  if (bytes_sent)
    for (int r = 0; r < n; ++r) bytes_sent->push_back(comm.bytes_sent_by(r));
  return count_wrong(op, buffers.recv, count, 2);
}

}  // namespace

TEST_CASE("ring and naive collectives equal the reference for N = 1..8 and awkward sizes") {
  // 0 and 1 element (chunks of 0 elements), odd sizes, sizes not divisible by N, and several segments per chunk.
  const std::int64_t counts[] = {0, 1, 2, 3, 5, 7, 13, 64, 100, 1001};
  for (int n = 1; n <= 8; ++n)
    for (std::int64_t count : counts)
      for (Op op : {Op::AllReduce, Op::ReduceScatter, Op::AllGather})
        for (Algorithm algorithm : {Algorithm::Ring, Algorithm::Naive})
          for (std::int64_t segment_bytes : {std::int64_t{8}, std::int64_t{256 << 10}}) {
            for (bool in_place : {false, true}) {
              if (in_place && op == Op::AllGather) continue;  // all-gather's input is its own output chunk anyway
              INFO("n=", n, " count=", count, " op=", op_name(op), " algo=", algorithm_name(algorithm),
                   " segment=", segment_bytes, " in_place=", in_place);
              CHECK(run_and_count_wrong(n, count, op, algorithm, in_place, segment_bytes) == 0);
            }
          }
}

TEST_CASE("the check counts what a collective got wrong") {
  const int n = 3;
  const std::int64_t count = 10;
  std::vector<std::vector<float>> recv(n, std::vector<float>(count));
  std::vector<float*> pointers;
  for (int r = 0; r < n; ++r) {
    for (std::int64_t i = 0; i < count; ++i) recv[r][i] = input_value(0, i) + input_value(1, i) + input_value(2, i);
    pointers.push_back(recv[r].data());
  }
  CHECK(count_wrong(Op::AllReduce, pointers, count, 1) == 0);
  recv[1][4] += 1;
  recv[2][9] = std::numeric_limits<float>::quiet_NaN();
  CHECK(count_wrong(Op::AllReduce, pointers, count, 2) == 2);
  // Reduce-scatter looks only at the owned chunk: rank 1 owns chunk 2 = elements 7..9 of 10 over 3 ranks,
  // rank 2 owns chunk 0 = elements 0..3, so neither error above counts, but one in rank 1's element 8 does.
  CHECK(count_wrong(Op::ReduceScatter, pointers, count, 1) == 0);
  recv[1][8] = 0.5f;
  CHECK(count_wrong(Op::ReduceScatter, pointers, count, 1) == 1);
}

TEST_CASE("each ring rank sends 2(N-1)/N x S bytes; rank 0 of the naive way sends (N-1) x S") {
  for (int n = 2; n <= 8; ++n) {
    const std::int64_t count = 840;  // divisible by 1..8
    const double bytes = count * 4.0;
    std::vector<std::int64_t> ring_sent, naive_sent;
    REQUIRE(run_and_count_wrong(n, count, Op::AllReduce, Algorithm::Ring, false, 64, &ring_sent) == 0);
    REQUIRE(run_and_count_wrong(n, count, Op::AllReduce, Algorithm::Naive, false, 64, &naive_sent) == 0);
    for (int r = 0; r < n; ++r)
      CHECK(ring_sent[r] == collective_cost(Op::AllReduce, Algorithm::Ring, n, bytes).bytes_sent_per_rank);
    CHECK(naive_sent[0] == collective_cost(Op::AllReduce, Algorithm::Naive, n, bytes).bytes_sent_per_rank);
    for (int r = 1; r < n; ++r) CHECK(naive_sent[r] == bytes);
    std::vector<std::int64_t> rs_sent;
    REQUIRE(run_and_count_wrong(n, count, Op::ReduceScatter, Algorithm::Ring, false, 64, &rs_sent) == 0);
    for (int r = 0; r < n; ++r) CHECK(rs_sent[r] == bytes * (n - 1) / n);
  }
}

TEST_CASE("theory: ring steps 2(N-1), bytes per rank 2(N-1)/N x S, nccl-tests busbw factors") {
  const double s = 64.0 * 1048576;
  for (int n = 1; n <= 16; ++n) {
    const CollectiveCost ar = collective_cost(Op::AllReduce, Algorithm::Ring, n, s);
    CHECK(ar.steps == 2 * (n - 1));
    CHECK(ar.bytes_sent_per_rank == doctest::Approx(2.0 * (n - 1) / n * s).epsilon(1e-15));
    CHECK(ar.busbw_factor == doctest::Approx(2.0 * (n - 1) / n).epsilon(1e-15));
    for (Op op : {Op::ReduceScatter, Op::AllGather}) {
      const CollectiveCost half = collective_cost(op, Algorithm::Ring, n, s);
      CHECK(half.steps == n - 1);
      CHECK(half.bytes_sent_per_rank == doctest::Approx(double(n - 1) / n * s).epsilon(1e-15));
      CHECK(half.busbw_factor == doctest::Approx(double(n - 1) / n).epsilon(1e-15));
    }
    const CollectiveCost naive = collective_cost(Op::AllReduce, Algorithm::Naive, n, s);
    CHECK(naive.bytes_sent_per_rank == (n - 1) * s);
    CHECK(naive.model_bytes == 2.0 * (n - 1) * s);
  }
  // Exact values: N = 4: busbw factor 1.5, 6 steps; N = 8: 1.75; N = 2: factor 1 (busbw = algbw), 1 x S per rank.
  CHECK(busbw_factor(Op::AllReduce, 4) == 1.5);
  CHECK(busbw_factor(Op::AllReduce, 8) == 1.75);
  CHECK(busbw_factor(Op::AllReduce, 2) == 1.0);
  CHECK(busbw_factor(Op::AllReduce, 1) == 0.0);  // N = 1: nothing crosses a link
  CHECK(collective_cost(Op::AllReduce, Algorithm::Ring, 2, s).bytes_sent_per_rank == s);
  // The course's worked number: 14 GB of FP16 gradients over 8 GPUs, each sends 2 x 7/8 x 14 = 24.5 GB.
  CHECK(collective_cost(Op::AllReduce, Algorithm::Ring, 8, 14e9).bytes_sent_per_rank == doctest::Approx(24.5e9));
}

TEST_CASE("the alpha-beta fit recovers alpha and beta from exact model times") {
  std::vector<CollectiveCost> costs;
  std::vector<double> times;
  for (double bytes = 1024; bytes <= 256.0 * 1048576; bytes *= 4) {
    costs.push_back(collective_cost(Op::AllReduce, Algorithm::Ring, 4, bytes));
    times.push_back(model_time_us(costs.back(), 7.5, 12.0));
  }
  const AlphaBetaFit fit = fit_alpha_beta(costs, times);
  REQUIRE(fit.valid);
  CHECK_FALSE(fit.alpha_forced_zero);
  CHECK(fit.alpha_us == doctest::Approx(7.5).epsilon(1e-9));
  CHECK(fit.beta_gbps == doctest::Approx(12.0).epsilon(1e-9));
  // N = 1 moves nothing between ranks: no beta to fit.
  CHECK_FALSE(fit_alpha_beta({collective_cost(Op::AllReduce, Algorithm::Ring, 1, 4096)}, {3.0}).valid);
}

TEST_CASE("the ring's own step record follows the protocol: step s, rank r sends chunk (r - s) mod N") {
  for (int n = 1; n <= 6; ++n)
    for (std::int64_t count : {std::int64_t{2}, std::int64_t{4}, std::int64_t{9}}) {
      const CollectiveRecord record = record_ring_allreduce(n, count);
      INFO("n=", n, " count=", count);
      REQUIRE(record.steps.size() == std::size_t(1 + 2 * (n - 1)));
      CHECK(record.chunk_begin.front() == 0);
      CHECK(record.chunk_begin.back() == count);
      const std::uint64_t everyone = (n == 64 ? ~0ull : (1ull << n) - 1);
      for (std::size_t row = 1; row < record.steps.size(); ++row) {
        const RingStep& step = record.steps[row];
        const int s = step.step;
        for (int r = 0; r < n; ++r) {
          const RankStep& rs = step.ranks[r];
          if (step.phase == "reduce_scatter") {
            CHECK(rs.sent_chunk == ((r - s) % n + n) % n);
            CHECK(rs.received_chunk == ((r - 1 - s) % n + 2 * n) % n);
            CHECK(rs.reduced);
            // After step s the chunk just received holds s + 2 ranks' inputs: rank r and the s + 1 before it.
            CHECK(__builtin_popcountll(rs.contributors[rs.received_chunk]) == s + 2);
          } else {
            CHECK(step.phase == "all_gather");
            CHECK(rs.sent_chunk == ((r + 1 - s) % n + n) % n);
            CHECK(rs.contributors[rs.received_chunk] == everyone);
          }
          CHECK(rs.sent_to == (r + 1) % n);
          CHECK(rs.received_from == (r + n - 1) % n);
        }
        if (step.phase == "reduce_scatter" && s == n - 2)
          for (int r = 0; r < n; ++r) CHECK(step.ranks[r].contributors[(r + 1) % n] == everyone);  // owned chunk
      }
      // The last step's values are the real sums: element i of the demo inputs sums to (i + 1) x 11..1 (n ones).
      const RingStep& last = record.steps.back();
      float ones = 0;
      for (int r = 0; r < n; ++r) ones = ones * 10 + 1;
      for (int r = 0; r < n; ++r) {
        for (std::int64_t i = 0; i < count; ++i) CHECK(last.ranks[r].values[i] == float(i + 1) * ones);
        for (int c = 0; c < n; ++c) CHECK(last.ranks[r].contributors[c] == everyone);
      }
    }
}

TEST_CASE("the step record shows the numbers of the four-rank example") {
  // N = 4, four numbers per rank: rank r holds (i + 1) x 10^r. After reduce-scatter step 0, rank 1 has added rank 0's
  // chunk 0 to its own: 1 + 10 = 11.
  const CollectiveRecord record = record_ring_allreduce(4, 4);
  CHECK(record.steps[0].phase == "start");
  CHECK(record.steps[0].ranks[2].values == std::vector<float>{100, 200, 300, 400});
  const RankStep& rank1 = record.steps[1].ranks[1];
  CHECK(rank1.sent_chunk == 1);
  CHECK(rank1.received_chunk == 0);
  CHECK(rank1.values[0] == 11);
  CHECK(rank1.contributors[0] == 0b0011);
  // After reduce-scatter (row 3), rank 0 owns chunk 1 = element 1: 2 + 20 + 200 + 2000.
  CHECK(record.steps[3].ranks[0].values[1] == 2222);
  CHECK(record.steps[3].ranks[0].contributors[1] == 0b1111);
}

TEST_CASE("the ways to all-reduce: the direct way and the ring send the same minimal bytes, in 2 and 2(N-1) steps") {
  const double s = 1048576;
  // N = 4: through rank 0 sends 3 S over 3 links in 6 steps; full exchange 3 S over 6 links in 1 step; the direct
  // reduce-scatter + all-gather and the ring 1.5 S each, over 6 links in 2 steps and over 4 links in 6 steps.
  const auto check = [&](AllReduceWay way, int links, int steps, double sent) {
    const WayCost c = all_reduce_way_cost(way, 4, s);
    CHECK(c.links == links);
    CHECK(c.steps == steps);
    CHECK(c.bytes_sent_busiest_rank == sent);
  };
  check(AllReduceWay::ThroughRoot, 3, 6, 3 * s);
  check(AllReduceWay::FullExchange, 6, 1, 3 * s);
  check(AllReduceWay::DirectPairs, 6, 2, 1.5 * s);
  check(AllReduceWay::Ring, 4, 6, 1.5 * s);
  for (int n = 2; n <= 64; ++n) {
    const WayCost direct = all_reduce_way_cost(AllReduceWay::DirectPairs, n, s);
    const WayCost ring = all_reduce_way_cost(AllReduceWay::Ring, n, s);
    CHECK(direct.bytes_sent_busiest_rank == ring.bytes_sent_busiest_rank);
    CHECK(ring.bytes_sent_busiest_rank == collective_cost(Op::AllReduce, Algorithm::Ring, n, s).bytes_sent_per_rank);
    CHECK(direct.steps == 2);
    CHECK(ring.steps == 2 * (n - 1));
    CHECK(direct.links == n * (n - 1) / 2);
    // Through rank 0 matches the naive implementation's counts: rank 0 sends (N-1) x S in 2(N-1) steps.
    const WayCost root = all_reduce_way_cost(AllReduceWay::ThroughRoot, n, s);
    const CollectiveCost naive = collective_cost(Op::AllReduce, Algorithm::Naive, n, s);
    CHECK(root.bytes_sent_busiest_rank == naive.bytes_sent_per_rank);
    CHECK(root.steps == naive.steps);
  }
  CHECK(all_reduce_way_cost(AllReduceWay::Ring, 2, s).links == 1);  // two ranks: one link, used both ways
  CHECK(all_reduce_way_cost(AllReduceWay::FullExchange, 1, s).steps == 0);
}

TEST_CASE("the ceiling's probe copies the bytes asked for on the ranks asked for, going round the buffer") {
  const int n = 3;
  const std::int64_t count = 100;
  MemoryLedger ledger;
  Communicator comm(n, ledger);
  std::vector<std::vector<float>> send(n, std::vector<float>(count)), recv(n, std::vector<float>(count, -1.0f));
  RankBuffers buffers{{}, {}, count};
  for (int r = 0; r < n; ++r) {
    fill_inputs(send[r].data(), r, count, 1);
    buffers.send.push_back(send[r].data());
    buffers.recv.push_back(recv[r].data());
  }
  for (CopyKind kind : {CopyKind::Memcpy, CopyKind::Streaming}) {
    for (auto& out : recv) std::fill(out.begin(), out.end(), -1.0f);
    // 1.5 buffers per rank (as an all-reduce over 4 ranks sends), on ranks 0 and 1 only.
    copy_on_ranks(comm, buffers, count * 4 * 3 / 2, kind, 2);
    CHECK(recv[0] == send[0]);
    CHECK(recv[1] == send[1]);
    CHECK(recv[2] == std::vector<float>(count, -1.0f));
    // Less than a buffer: only the first elements.
    for (auto& out : recv) std::fill(out.begin(), out.end(), -1.0f);
    copy_on_ranks(comm, buffers, 40, kind, n);
    for (int r = 0; r < n; ++r) {
      CHECK(std::vector<float>(recv[r].begin(), recv[r].begin() + 10) ==
            std::vector<float>(send[r].begin(), send[r].begin() + 10));
      CHECK(recv[r][10] == -1.0f);
    }
  }
}

TEST_CASE("back-to-back small collectives stay correct whichever way ranks wait (spin, yield, sleep)") {
  // Many short calls drive every wait phase: the spin budget grows and shrinks, ranks yield and sleep. Two ranks can
  // spin on this machine's cores; more ranks than hardware threads never spin.
  const int oversubscribed = static_cast<int>(std::thread::hardware_concurrency()) + 2;
  for (int n : {2, oversubscribed}) {
    MemoryLedger ledger;
    Communicator comm(n, ledger, CommOptions{.segment_bytes = 64});
    const std::int64_t count = 37;
    std::vector<std::vector<float>> send(n, std::vector<float>(count)), recv(n, std::vector<float>(count));
    RankBuffers buffers{{}, {}, count};
    for (int r = 0; r < n; ++r) {
      fill_inputs(send[r].data(), r, count, 1);
      buffers.send.push_back(send[r].data());
      buffers.recv.push_back(recv[r].data());
    }
    std::int64_t wrong = 0;
    for (int call = 0; call < 300; ++call) {
      for (auto& out : recv) std::fill(out.begin(), out.end(), 0.0f);
      run_collective(comm, Op::AllReduce, Algorithm::Ring, buffers);
      wrong += count_wrong(Op::AllReduce, buffers.recv, count, 1);
    }
    INFO("n=", n);
    CHECK(wrong == 0);
  }
}

TEST_CASE("a rank that fails mid-collective ends the run with its own error; the ranks waiting for it stop") {
  MemoryLedger ledger;
  for (const bool poll : {true, false}) {
    collectives::Communicator comm(4, ledger, {.segment_bytes = 64, .poll = poll});
    std::vector<float> buffer(64, 1.0f);
    // Ranks 0, 2 and 3 wait for messages from their left neighbour (and rank 0 also for a free slot to rank 1, once
    // its slots fill); rank 1 fails before it sends anything.
    auto work = [&](int rank) {
      if (rank == 1) throw std::runtime_error("rank 1 ran out of memory");
      collectives::Channel& to_next = comm.link(rank, (rank + 1) % 4);
      for (int i = 0; i < 8; ++i) to_next.send(buffer.data(), 16);
      collectives::Channel& from_prev = comm.link((rank + 3) % 4, rank);
      collectives::receive_range(from_prev, buffer.data(), nullptr, 16);
    };
    CHECK_THROWS_WITH_AS(comm.run_on_ranks(work), "rank 1 ran out of memory", std::runtime_error);
  }
}
