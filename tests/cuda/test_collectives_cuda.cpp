// The GPU collectives against the same reference sum as the CPU ranks (reference.h): every element exact.
#include <cuda_runtime.h>
#include <doctest/doctest.h>

#include <vector>

#include "engine/errors.h"
#include "engine/ledger.h"
#include "kernels/collectives/all_to_all.h"
#include "kernels/collectives/collectives_cuda.h"
#include "kernels/collectives/nccl_thread_ranks.h"
#include "kernels/collectives/rank_group.h"
#include "kernels/collectives/reference.h"
#include "tests/support/cuda_devices.h"

using namespace dlsys;
using namespace dlsys::collectives;

namespace {

std::int64_t wrong_after(Op op, cuda::Implementation implementation, int n, std::int64_t count) {
  std::vector<std::vector<float>> results(n, std::vector<float>(static_cast<std::size_t>(count)));
  std::vector<float*> pointers;
  for (auto& r : results) pointers.push_back(r.data());
  cuda::measure(op, implementation, n, count, MeasureOptions{.warmup = 1, .repeats = 1}, pointers);
  return count_wrong(op, pointers, count, 2);
}

}  // namespace

TEST_CASE("GPU ring (emulated or one rank per GPU) equals the reference sum at awkward sizes") {
  for (int n = 1; n <= 5; ++n)
    for (std::int64_t count :
         {std::int64_t{1}, std::int64_t{3}, std::int64_t{7}, std::int64_t{1000}, std::int64_t{1} << 20})
      for (Op op : {Op::AllReduce, Op::ReduceScatter, Op::AllGather}) {
        INFO("n=", n, " count=", count, " op=", int(op));
        CHECK(wrong_after(op, cuda::Implementation::Ring, n, count) == 0);
      }
}

TEST_CASE("NCCL collectives equal the reference sum, one rank per GPU") {
  if (!cuda::nccl_compiled()) return;
  const int gpus = testing::cuda_device_count();
  for (int n = 1; n <= std::min(gpus, 4); ++n)
    for (std::int64_t count : {std::int64_t{840}, std::int64_t{1} << 20}) {
      INFO("n=", n, " count=", count);
      CHECK(wrong_after(Op::AllReduce, cuda::Implementation::Nccl, n, count) == 0);
      CHECK(wrong_after(Op::ReduceScatter, cuda::Implementation::Nccl, n, count) == 0);
      CHECK(wrong_after(Op::AllGather, cuda::Implementation::Nccl, n, count) == 0);
    }
}

TEST_CASE("NCCL refuses two ranks on one GPU: asking for it is bad input, not a crash") {
  if (!cuda::nccl_compiled() || testing::cuda_device_count() != 1) return;
  std::vector<float> a(16), b(16);
  CHECK_THROWS_AS(
      cuda::measure(Op::AllReduce, cuda::Implementation::Nccl, 2, 16, MeasureOptions{}, {a.data(), b.data()}),
      BadInput);
}

namespace {
// Rank r's counts for an all-to-all over n ranks: uneven, some zero, the own block included.
std::vector<std::int64_t> counts_from(int r, int n) {
  std::vector<std::int64_t> counts;
  for (int p = 0; p < n; ++p) counts.push_back(((3 * r + 5 * p + 1) % 4) * 37);
  return counts;
}
}  // namespace

TEST_CASE("NCCL's all-to-all between rank threads, a GPU each, delivers what the threads' own all-to-all delivers") {
  if (!cuda::nccl_compiled()) return;
  for (int n = 1; n <= std::min(testing::cuda_device_count(), 4); ++n) {
    INFO("n = ", n);
    MemoryLedger ledger;
    const std::int64_t max_floats = 4 * 37 * n;
    const auto threads = make_thread_group(n, ledger, CommOptions{.full_mesh = true});
    const auto gpus = with_nccl_all_to_all(make_thread_group(n, ledger), cuda::make_nccl_thread_ranks(n, max_floats));
    std::vector<std::vector<float>> send(n), on_threads(n), on_gpus(n);
    const auto recv_counts = [n](int r) {
      std::vector<std::int64_t> counts;
      for (int p = 0; p < n; ++p) counts.push_back(counts_from(p, n)[std::size_t(r)]);
      return counts;
    };
    for (int r = 0; r < n; ++r) {
      for (std::int64_t c : counts_from(r, n))
        for (std::int64_t i = 0; i < c; ++i) send[r].push_back(float(1000 * r + send[r].size()));
      std::int64_t in = 0;
      for (std::int64_t c : recv_counts(r)) in += c;
      on_threads[r].assign(std::size_t(in), -1.0f);
      on_gpus[r].assign(std::size_t(in), -2.0f);
    }
    for (RankGroup* group : {threads.get(), gpus.get()})
      group->run_on_ranks([&](int r) {
        auto& out = group == threads.get() ? on_threads : on_gpus;
        group->all_to_all(r, send[r].data(), counts_from(r, n), out[r].data(), recv_counts(r));
      });
    for (int r = 0; r < n; ++r) {
      CHECK(on_gpus[r] == on_threads[r]);
      CHECK(gpus->bytes_sent_by(r) == all_to_all_bytes_sent(r, counts_from(r, n)));
      CHECK(gpus->bytes_received_by(r) == all_to_all_bytes_sent(r, recv_counts(r)));
    }
    // More than its buffers hold: refused on every rank before any NCCL call, so no rank waits for another.
    std::vector<float> big(std::size_t(max_floats + 1) * std::size_t(n));
    CHECK_THROWS_AS(gpus->run_on_ranks([&](int r) {
      std::vector<std::int64_t> counts(std::size_t(n), 0);
      counts[std::size_t(r)] = max_floats + 1;
      gpus->all_to_all(r, big.data(), counts, big.data(), counts);
    }),
                    RunFailure);
  }
}

TEST_CASE("NCCL between rank threads needs a GPU per rank: more ranks than GPUs is refused with the reason") {
  if (!cuda::nccl_compiled()) return;
  const int n = testing::cuda_device_count() + 1;
  CHECK_THROWS_WITH_AS(cuda::make_nccl_thread_ranks(n, 16), doctest::Contains("needs a GPU per rank"), RunFailure);
}

TEST_CASE("the GPU copy ceiling is a positive bandwidth") {
  CHECK(cuda::copy_bandwidth_gbps(1, 64 << 20) > 0);
  CHECK(cuda::copy_bandwidth_gbps(4, 64 << 20) > 0);
}
