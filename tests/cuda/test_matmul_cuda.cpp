// Every CUDA matmul variant against the CPU double reference, at sizes that miss the 32 x 32 thread blocks and tiles:
// single elements, primes, one past a tile, k = 1, and non-square shapes where a swapped m/n/k or a wrong leading
// dimension in the cuBLAS row-major trick would show (or fault).
#include <doctest/doctest.h>

#include <vector>

#include "kernels/matmul/matmul.h"
#include "kernels/matmul/matmul_cuda.h"
#include "tests/support/random_values.h"

using namespace dlsys;
using matmul::Shape;

using testing::random_values;

TEST_CASE("every CUDA matmul variant matches the double reference at awkward sizes") {
  const Shape shapes[] = {{1, 1, 1},    {7, 7, 7},      {129, 129, 129}, {1, 300, 17},   {65, 3, 129},
                          {33, 130, 1}, {1000, 33, 70}, {33, 1000, 70},  {70, 33, 1000}, {513, 257, 1025}};
  using matmul::cuda::Variant;
  const std::pair<const char*, Variant> variants[] = {
      {"v1_naive", Variant::Naive}, {"v2_smem_tiled", Variant::SmemTiled}, {"v3_cublas", Variant::Cublas}};
  const MeasureOptions options{.warmup = 1, .repeats = 2};
  for (const Shape& s : shapes) {
    const auto a = random_values(s.m * s.k, 1), b = random_values(s.k * s.n, 2);
    std::vector<double> ref(static_cast<std::size_t>(s.m * s.n));
    matmul::reference(s, a.data(), b.data(), ref.data());
    for (const auto& [name, variant] : variants) {
      std::vector<float> c(ref.size(), -999.0f);  // anything not written by the kernel shows up as a large error
      const TimingStats t = matmul::cuda::run(variant, s, a.data(), b.data(), c.data(), options);
      const double err = matmul::max_relative_error(s, a.data(), b.data(), c.data(), ref.data());
      INFO(name, " ", s.m, "x", s.n, "x", s.k, " error ", err);
      CHECK(err <= matmul::error_tolerance(s));
      CHECK(t.repeats == options.repeats);
      CHECK(t.timer == "cuda_event");
    }
  }
}
