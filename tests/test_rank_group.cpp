// The rank group's thread transport: the lab's ring in and out of place, every op, bytes counted against the ring's
// closed form, and a barrier that an abort releases. (The MPI transport runs the same runs in tests/cli/mpi_*.sh.)
#include <doctest/doctest.h>

#include <atomic>
#include <limits>
#include <thread>
#include <vector>

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
