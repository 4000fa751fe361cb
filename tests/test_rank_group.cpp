// The rank group's thread transport: the lab's ring in and out of place, every op, bytes counted against the ring's
// closed form, a barrier that an abort releases, and the group whose all-to-alls go over NCCL (here with a stand-in
// for it; tests/cuda/test_collectives_cuda.cpp runs NCCL). The MPI transport runs the same runs in
// tests/cli/mpi_*.sh.
#include <doctest/doctest.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "kernels/collectives/all_to_all.h"
#include "kernels/collectives/nccl_thread_ranks.h"
#include "kernels/collectives/rank_group.h"
#include "kernels/collectives/rank_reference.h"
#include "kernels/collectives/reference.h"
#include "kernels/collectives/ring_schedule.h"

namespace co = dlsys::collectives;

TEST_CASE("a thread rank group's ring is exact for every op, in and out of place, with the bytes of its closed form") {
  for (const int n : {1, 2, 3, 4}) {
    for (const std::int64_t count : {std::int64_t(1), std::int64_t(7), std::int64_t(1000)}) {
      for (const co::Op op : {co::Op::AllReduce, co::Op::ReduceScatter, co::Op::AllGather}) {
        for (const bool in_place : {false, true}) {
          CAPTURE(n);
          CAPTURE(count);
          CAPTURE(co::op_name(op));
          CAPTURE(in_place);
          dlsys::MemoryLedger ledger;
          const auto group = co::make_thread_group(n, ledger);
          REQUIRE(group->size() == n);
          REQUIRE(group->local_ranks() == n);
          const auto ranks = std::size_t(n), elements = std::size_t(count);
          std::vector<std::vector<float>> send(ranks, std::vector<float>(elements));
          std::vector<std::vector<float>> recv(ranks,
                                               std::vector<float>(elements, std::numeric_limits<float>::quiet_NaN()));
          for (int r = 0; r < n; ++r) co::fill_inputs(send[std::size_t(r)].data(), r, count, 1);
          group->run_on_ranks([&](int r) {
            float* out = in_place ? send[std::size_t(r)].data() : recv[std::size_t(r)].data();
            group->ring(r, op, send[std::size_t(r)].data(), out, count);
          });
          for (int r = 0; r < n; ++r) {
            const float* out = in_place ? send[std::size_t(r)].data() : recv[std::size_t(r)].data();
            CHECK(co::count_wrong_on_rank(op, out, count, r, n, co::ChunkOwnership{1}) == 0);
          }
          if (op == co::Op::AllReduce)
            for (int r = 0; r < n; ++r) {
              const std::int64_t expected = n > 1 ? 4 * co::ring_all_reduce_elements_sent(r, n, count) : 0;
              CHECK(group->bytes_sent_by(r) == expected);
              CHECK(group->bytes_received_by(r) == (n > 1 ? group->bytes_sent_by(co::prev_rank(r, n)) : 0));
            }
        }
      }
    }
  }
}

TEST_CASE("a thread rank group's barrier holds every rank until the last arrives, and an abort releases the waiters") {
  dlsys::MemoryLedger ledger;
  const auto group = co::make_thread_group(3, ledger);
  std::atomic<int> arrived{0}, passed{0};
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r)
    ranks.emplace_back([&, r] {
      ++arrived;
      if (group->barrier(r)) ++passed;
    });
  while (arrived < 2) std::this_thread::yield();
  CHECK(passed == 0);  // rank 2 has not arrived
  group->abort();
  for (std::thread& t : ranks) t.join();
  CHECK(passed == 0);
  CHECK_FALSE(group->barrier(2));
  CHECK(group->shared_memory_links() != nullptr);
}

TEST_CASE("a thread rank group's all-to-all delivers every block, uneven and empty ones, with the bytes of its form") {
  for (const int n : {1, 2, 3, 4}) {
    for (const std::int64_t scale : {std::int64_t(1), std::int64_t(700)}) {  // 700 floats: several 1 KiB segments
      CAPTURE(n);
      CAPTURE(scale);
      dlsys::MemoryLedger ledger;
      const auto group = co::make_thread_group(n, ledger, co::CommOptions{.segment_bytes = 1024, .full_mesh = true});
      const auto ranks = std::size_t(n);
      // Rank p's block for rank q: (p + 2q) % 3 units long, so some blocks are empty and no two ranks send alike.
      const auto count = [&](int p, int q) { return std::int64_t((p + 2 * q) % 3) * scale; };
      const auto value = [](int p, int q, std::int64_t i) { return float(p * 100000 + q * 10000 + i); };
      std::vector<std::vector<std::int64_t>> send_counts(ranks), recv_counts(ranks);
      std::vector<std::vector<float>> send(ranks), recv(ranks);
      for (int p = 0; p < n; ++p)
        for (int q = 0; q < n; ++q) {
          send_counts[std::size_t(p)].push_back(count(p, q));
          recv_counts[std::size_t(p)].push_back(count(q, p));
          for (std::int64_t i = 0; i < count(p, q); ++i) send[std::size_t(p)].push_back(value(p, q, i));
        }
      for (int p = 0; p < n; ++p) {
        std::int64_t total = 0;
        for (const std::int64_t c : recv_counts[std::size_t(p)]) total += c;
        recv[std::size_t(p)].assign(std::size_t(total), -1.0f);
      }
      group->run_on_ranks([&](int r) {
        const auto me = std::size_t(r);
        group->all_to_all(r, send[me].data(), send_counts[me], recv[me].data(), recv_counts[me]);
      });
      for (int q = 0; q < n; ++q) {
        std::vector<float> expected;
        for (int p = 0; p < n; ++p)
          for (std::int64_t i = 0; i < count(p, q); ++i) expected.push_back(value(p, q, i));
        CHECK(recv[std::size_t(q)] == expected);
        std::int64_t received = 0;
        for (int p = 0; p < n; ++p)
          if (p != q) received += 4 * count(p, q);
        CHECK(group->bytes_sent_by(q) == co::all_to_all_bytes_sent(q, send_counts[std::size_t(q)]));
        CHECK(group->bytes_received_by(q) == received);
      }
    }
  }
}

TEST_CASE("all-to-all's bus factor is (N-1)/N and a thread group without a crossbar refuses it") {
  CHECK(co::all_to_all_bus_factor(1) == 0.0);
  CHECK(co::all_to_all_bus_factor(4) == 0.75);
  CHECK(co::all_to_all_bus_factor(8) == 0.875);
  dlsys::MemoryLedger ledger;
  const auto group = co::make_thread_group(3, ledger);
  std::vector<float> data(3, 1.0f);
  const std::vector<std::int64_t> counts{1, 1, 1};
  CHECK_THROWS_AS(group->run_on_ranks([&](int r) { group->all_to_all(r, data.data(), counts, data.data(), counts); }),
                  std::logic_error);
}

TEST_CASE("an emulated wire delivers the same data, never sooner than its bytes at its bandwidth, and off the core") {
  // 0.1 GB/s is a byte per 10 ns: a 2-rank all-reduce of 256 Ki floats sends 1 MiB each way, so no rank can finish
  // before 10,485,760 ns; and while it waits it sleeps, so its thread's CPU time stays well under its wall time (the
  // wire is slow enough that copies and sums slowed down many times, as under ThreadSanitizer, still take a fraction).
  constexpr std::int64_t kCount = 256 << 10;
  dlsys::MemoryLedger ledger;
  const auto group = co::make_thread_group(2, ledger, co::CommOptions{.poll = false, .link_gbps = 0.1});
  std::vector<std::vector<float>> data(2, std::vector<float>(std::size_t(kCount)));
  for (int r = 0; r < 2; ++r) co::fill_inputs(data[std::size_t(r)].data(), r, kCount, 1);
  std::vector<double> wall_ns(2), cpu_ns(2);
  group->run_on_ranks([&](int r) {
    timespec cpu_start{}, cpu_end{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu_start);
    const auto start = std::chrono::steady_clock::now();
    float* mine = data[std::size_t(r)].data();
    group->ring(r, co::Op::AllReduce, mine, mine, kCount);
    wall_ns[std::size_t(r)] =
        double(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu_end);
    cpu_ns[std::size_t(r)] =
        1e9 * double(cpu_end.tv_sec - cpu_start.tv_sec) + double(cpu_end.tv_nsec - cpu_start.tv_nsec);
  });
  for (int r = 0; r < 2; ++r) {
    CAPTURE(r);
    CHECK(co::count_wrong_on_rank(co::Op::AllReduce, data[std::size_t(r)].data(), kCount, r, 2,
                                  co::ChunkOwnership{1}) == 0);
    CHECK(group->bytes_sent_by(r) == 4 * kCount / 2 * 2);
    CHECK(wall_ns[std::size_t(r)] >= 40.0 * kCount);
    CHECK(cpu_ns[std::size_t(r)] < 0.5 * wall_ns[std::size_t(r)]);
  }
}

namespace {

// Stands in for NCCL between GPU ranks where there are no GPUs: a crossbar of rank threads carries the all-to-all, and
// the aborts are counted.
class CrossbarAsNccl final : public co::cuda::NcclThreadRanks {
 public:
  CrossbarAsNccl(int n, dlsys::MemoryLedger& ledger)
      : crossbar_(co::make_thread_group(n, ledger, co::CommOptions{.full_mesh = true})) {}
  void all_to_all(int rank, const float* send, const std::vector<std::int64_t>& send_counts, float* recv,
                  const std::vector<std::int64_t>& recv_counts) override {
    crossbar_->all_to_all(rank, send, send_counts, recv, recv_counts);
  }
  void abort() override {
    ++aborts;
    crossbar_->abort();
  }
  std::atomic<int> aborts{0};

 private:
  std::unique_ptr<co::RankGroup> crossbar_;
};

}  // namespace

TEST_CASE(
    "a group whose all-to-alls go over NCCL counts their off-rank bytes, keeps the ring, and aborts NCCL on a "
    "failure") {
  const int n = 3;
  dlsys::MemoryLedger ledger;
  auto stand_in = std::make_unique<CrossbarAsNccl>(n, ledger);
  CrossbarAsNccl& nccl = *stand_in;
  const auto group = co::with_nccl_all_to_all(co::make_thread_group(n, ledger), std::move(stand_in));
  // Rank r sends r + p + 1 floats to rank p, so it receives p + r + 1 from each.
  const auto counts = [n](int r) {
    std::vector<std::int64_t> c;
    for (int p = 0; p < n; ++p) c.push_back(r + p + 1);
    return c;
  };
  std::vector<std::vector<float>> send(n), recv(n);
  for (int r = 0; r < n; ++r) {
    for (int p = 0; p < n; ++p)
      for (int i = 0; i < r + p + 1; ++i) send[std::size_t(r)].push_back(float(100 * r + 10 * p + i));
    recv[std::size_t(r)].assign(send[std::size_t(r)].size(), -1.0f);
  }
  group->run_on_ranks([&](int r) {
    group->all_to_all(r, send[std::size_t(r)].data(), counts(r), recv[std::size_t(r)].data(), counts(r));
  });
  for (int r = 0; r < n; ++r) {
    CAPTURE(r);
    // From rank p, in rank order: its block for r, 100 p + 10 r + i.
    std::size_t at = 0;
    for (int p = 0; p < n; ++p)
      for (int i = 0; i < r + p + 1; ++i) CHECK(recv[std::size_t(r)][at++] == float(100 * p + 10 * r + i));
    CHECK(group->bytes_sent_by(r) == co::all_to_all_bytes_sent(r, counts(r)));
    CHECK(group->bytes_received_by(r) == co::all_to_all_bytes_sent(r, counts(r)));
  }
  // The ring stays the lab's on the rank threads, and its bytes add to the all-to-all's.
  const std::int64_t before = group->bytes_sent_by(0);
  std::vector<std::vector<float>> data(n, std::vector<float>(6, 1.0f));
  group->run_on_ranks(
      [&](int r) { group->ring(r, co::Op::AllReduce, data[std::size_t(r)].data(), data[std::size_t(r)].data(), 6); });
  CHECK(data[1] == std::vector<float>(6, 3.0f));
  CHECK(group->bytes_sent_by(0) - before == 4 * co::ring_all_reduce_elements_sent(0, n, 6));
  CHECK(nccl.aborts == 0);
  CHECK_THROWS_AS(group->run_on_ranks([&](int r) {
    if (r == 1) throw std::runtime_error("rank 1 failed");
  }),
                  std::runtime_error);
  CHECK(nccl.aborts >= 1);
}
