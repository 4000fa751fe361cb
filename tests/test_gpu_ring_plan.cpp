// The GPU ring's plan shared by the GPU paths with ranks (kernels/collectives/gpu_ring_plan.h): the landing buffer
// holds every chunk that arrives, and the elements a rank sends are the closed form's. (The schedule itself is played
// on the host in test_tensor_gpu_plan.cpp.)
#include <doctest/doctest.h>

#include <algorithm>

#include "kernels/collectives/gpu_ring_plan.h"

using namespace dlsys;
using collectives::Op;

TEST_CASE("GPU ring plan: the landing buffer fits every arriving chunk; a rank sends (N-1) chunks per half") {
  for (int n : {1, 2, 3, 4, 5, 8})
    for (std::int64_t count : {std::int64_t(1), std::int64_t(2), std::int64_t(7), std::int64_t(1000),
                               std::int64_t(1001), std::int64_t(4097)}) {
      CAPTURE(n);
      CAPTURE(count);
      const std::int64_t landing = collectives::gpu_ring_landing_elements(n, count);
      CHECK(landing >= 1);
      for (Op op : {Op::AllReduce, Op::ReduceScatter, Op::AllGather}) {
        std::int64_t largest = 0, total = 0;
        for (const auto& step : collectives::gpu_ring_steps(op, n, count)) {
          CHECK(step.size() == std::size_t(n));
          for (const collectives::RingTransfer& t : step) {
            largest = std::max(largest, t.size);
            total += t.size;
          }
        }
        CHECK(largest <= landing);
        std::int64_t summed = 0;
        for (int r = 0; r < n; ++r) {
          const std::int64_t sent = collectives::gpu_ring_elements_sent(op, n, r, count);
          CHECK(collectives::gpu_ring_bytes_sent(op, n, r, count) == 4 * sent);
          summed += sent;
        }
        CHECK(summed == total);
        // Every rank sends N - 1 chunks per half, all chunks together: (N - 1) x count per half over all ranks.
        const std::int64_t halves = op == Op::AllReduce ? 2 : 1;
        CHECK(total == (n > 1 ? halves * (n - 1) * count : 0));
      }
    }
  const collectives::GpuPlacement one = collectives::plan_gpu_placement(4, 4, false);
  CHECK_FALSE(one.emulated);
  CHECK(one.collectives == collectives::GpuCollectives::Ring);
  CHECK(collectives::plan_gpu_placement(4, 4, true).collectives == collectives::GpuCollectives::Nccl);
  CHECK(collectives::plan_gpu_placement(4, 2, true).emulated);
}
