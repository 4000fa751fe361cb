// Every rung of the CUDA matmul ladder, and every warp-tile configuration, against the CPU double reference, at sizes
// that miss every tile: single elements, primes, one past a tile, k = 1, non-square shapes where a swapped m/n/k or a
// wrong leading dimension would show (or fault), and shapes whose rows are 16-byte aligned (k, n multiples of 4 or 8)
// but whose tiles are ragged, so the vector paths' edges are checked too. C is poisoned with NaN before each rung, so
// an element no thread writes fails the check.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "kernels/matmul/ladder.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/matmul_cuda.h"
#include "kernels/matmul/matmul_devices.h"
#include "tests/support/random_values.h"

using namespace dlsys;
using matmul::Shape;
using testing::random_values;

namespace {

const Shape kShapes[] = {{1, 1, 1},       {7, 7, 7},      {129, 129, 129}, {1, 300, 17},     {65, 3, 129},
                         {33, 130, 1},    {1000, 33, 70}, {33, 1000, 70},  {70, 33, 1000},   {513, 257, 1025},
                         {4, 4, 4},       {100, 36, 20},  {260, 132, 68},  {129, 264, 1032}, {8, 8, 8},
                         {256, 256, 256}, {300, 520, 264}};

struct Case {
  Shape shape;
  std::vector<float> a, b;
  std::vector<double> ref;
};

Case make_case(const Shape& s) {
  Case c{s, random_values(s.m * s.k, 1), random_values(s.k * s.n, 2), {}};
  c.ref.resize(static_cast<std::size_t>(s.m * s.n));
  matmul::reference(s, c.a.data(), c.b.data(), c.ref.data());
  return c;
}

// Runs `rung` (configuration `warp_tile` for the warp-tiled kernel) on poisoned output and checks it.
void check_rung(const Case& c, matmul::cuda::DeviceOperands& operands, matmul::Rung rung, int warp_tile) {
  const Shape& s = c.shape;
  const matmul::RungInfo& info = matmul::rung_info(rung);
  operands.poison_output();
  const TimingStats t = operands.time(rung, MeasureOptions{.warmup = 0, .repeats = 1}, warp_tile);
  std::vector<float> out(c.ref.size(), 0.0f);
  operands.download_output(out.data());
  const double err = matmul::max_relative_error(s, c.a.data(), c.b.data(), out.data(), c.ref.data());
  INFO(info.kernel, " (config ", warp_tile, ") ", s.m, "x", s.n, "x", s.k, " error ", err);
  CHECK(err <= matmul::error_tolerance(info.precision, s));
  CHECK(t.timer == "cuda_event");
}

}  // namespace

TEST_CASE("every rung of the CUDA matmul ladder matches the double reference at awkward sizes") {
  for (const Shape& s : kShapes) {
    const Case c = make_case(s);
    const auto on_device = matmul::cuda::make_device_operands(s, c.a.data(), c.b.data());
    matmul::cuda::DeviceOperands& operands = *on_device;
    for (const matmul::RungInfo& info : matmul::kLadder) check_rung(c, operands, info.rung, matmul::kLessonWarpTile);
  }
}

TEST_CASE("every warp-tile configuration of v7_warptile matches the double reference") {
  for (const Shape& s : kShapes) {
    const Case c = make_case(s);
    const auto on_device = matmul::cuda::make_device_operands(s, c.a.data(), c.b.data());
    matmul::cuda::DeviceOperands& operands = *on_device;
    for (int config = 0; config < int(matmul::kWarpTiles.size()); ++config)
      check_rung(c, operands, matmul::Rung::WarpTiled, config);
    // The lesson's choice: the tuning picks one of them, and running "the tuned one" runs it.
    const int best = operands.best_warp_tile();
    CHECK(best >= 0);
    CHECK(best < int(matmul::kWarpTiles.size()));
    CHECK(operands.best_warp_tile() == best);
    check_rung(c, operands, matmul::Rung::WarpTiled, matmul::cuda::kTunedWarpTile);
  }
}

TEST_CASE("tf32 and bf16 kernels round their inputs: their error is above fp32's and within their own bound") {
  // A short k, where fp32's own bound (2 k 2^-24) is tiny next to an input rounded to 11 or 8 bits: an fp32-accurate
  // result here would mean the tensor-core rungs never rounded (or never ran on the tensor cores).
  const Case c = make_case({128, 128, 16});
  const auto on_device = matmul::cuda::make_device_operands(c.shape, c.a.data(), c.b.data());
  matmul::cuda::DeviceOperands& operands = *on_device;
  for (matmul::Rung rung : {matmul::Rung::Tf32Mma, matmul::Rung::Bf16Mma}) {
    operands.poison_output();
    operands.time(rung, MeasureOptions{.warmup = 0, .repeats = 1});
    std::vector<float> out(c.ref.size());
    operands.download_output(out.data());
    const double err = matmul::max_relative_error(c.shape, c.a.data(), c.b.data(), out.data(), c.ref.data());
    INFO(matmul::rung_info(rung).kernel, " error ", err);
    CHECK(err > matmul::error_tolerance(matmul::Precision::Fp32, c.shape));
    CHECK(err <= matmul::error_tolerance(matmul::rung_info(rung).precision, c.shape));
  }
}

TEST_CASE("the CUDA matmul device times the kernels the CPU also has (naive, tiled, blas) and fetches each product") {
  const Case c = make_case({65, 3, 129});
  const auto gpu = matmul::make_matmul_device(BackendKind::Cuda, 1, 64, [] {});
  const auto kernels =
      gpu->kernels([](std::string_view key) { return key == "naive" || key == "tiled" || key == "blas"; });
  REQUIRE(kernels.size() == 3);
  std::vector<float> out(c.ref.size(), -999.0f);
  const auto operands = gpu->operands(c.shape, c.a.data(), c.b.data(), out.data());
  for (const matmul::DeviceKernel& k : kernels) {
    std::fill(out.begin(), out.end(), -999.0f);
    const TimingStats t = operands->time(k, MeasureOptions{.warmup = 1, .repeats = 2}, true);
    INFO(k.kernel);
    CHECK(matmul::max_relative_error(c.shape, c.a.data(), c.b.data(), out.data(), c.ref.data()) <=
          matmul::error_tolerance(c.shape));
    CHECK(t.repeats == 2);
  }
}
