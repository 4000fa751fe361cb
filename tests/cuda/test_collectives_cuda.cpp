// The GPU collectives against the same reference sum as the CPU ranks (reference.h): every element exact.
#include <cuda_runtime.h>
#include <doctest/doctest.h>

#include <vector>

#include "engine/errors.h"
#include "kernels/collectives/collectives_cuda.h"
#include "kernels/collectives/reference.h"

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

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return 0;
  return count;
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
  const int gpus = device_count();
  for (int n = 1; n <= std::min(gpus, 4); ++n)
    for (std::int64_t count : {std::int64_t{840}, std::int64_t{1} << 20}) {
      INFO("n=", n, " count=", count);
      CHECK(wrong_after(Op::AllReduce, cuda::Implementation::Nccl, n, count) == 0);
      CHECK(wrong_after(Op::ReduceScatter, cuda::Implementation::Nccl, n, count) == 0);
      CHECK(wrong_after(Op::AllGather, cuda::Implementation::Nccl, n, count) == 0);
    }
}

TEST_CASE("NCCL refuses two ranks on one GPU: asking for it is bad input, not a crash") {
  if (!cuda::nccl_compiled() || device_count() != 1) return;
  std::vector<float> a(16), b(16);
  CHECK_THROWS_AS(
      cuda::measure(Op::AllReduce, cuda::Implementation::Nccl, 2, 16, MeasureOptions{}, {a.data(), b.data()}),
      BadInput);
}

TEST_CASE("the GPU copy ceiling is a positive bandwidth") {
  CHECK(cuda::copy_bandwidth_gbps(1, 64 << 20) > 0);
  CHECK(cuda::copy_bandwidth_gbps(4, 64 << 20) > 0);
}
