#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "engine/params.h"
#include "kernels/matmul/ladder.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/matmul_devices.h"
#include "lessons/matmul/matmul_lesson.h"
#include "tests/support/random_values.h"

using namespace dlsys;
using matmul::Shape;

using testing::random_values;

TEST_CASE("every CPU matmul variant matches the double reference at awkward sizes") {
  // Awkward on purpose: single elements, primes, one past a power of two, k = 1, very flat and very thin matrices, and
  // shapes that cross v2_tiled's micro-tile, k-slice, row-block and column-slice edges.
  const Shape shapes[] = {{1, 1, 1},    {7, 7, 7},     {129, 129, 129}, {1, 300, 17},     {65, 3, 129},
                          {33, 130, 1}, {200, 97, 64}, {1000, 1000, 3}, {513, 257, 1025}, {3, 4133, 5}};
  using Kernel = void (*)(const Shape&, const float*, const float*, float*, int);
  const std::pair<const char*, Kernel> variants[] = {
      {"v1_naive", matmul::v1_naive}, {"v2_tiled", matmul::v2_tiled}, {"v3_blas", matmul::v3_blas}};
  for (const Shape& s : shapes) {
    const auto a = random_values(s.m * s.k, 1), b = random_values(s.k * s.n, 2);
    std::vector<double> ref(static_cast<std::size_t>(s.m * s.n));
    matmul::reference(s, a.data(), b.data(), ref.data());
    // Not a structured binding: INFO captures `name` in a lambda, which clang before 16 refuses for bindings.
    for (const auto& variant : variants)
      for (int threads : {1, 2, 3}) {
        const char* name = variant.first;
        std::vector<float> c(ref.size(), -999.0f);
        variant.second(s, a.data(), b.data(), c.data(), threads);
        const double err = matmul::max_relative_error(s, a.data(), b.data(), c.data(), ref.data());
        INFO(name, " ", s.m, "x", s.n, "x", s.k, " threads ", threads, " error ", err);
        CHECK(err <= matmul::error_tolerance(s));
      }
  }
}

TEST_CASE("the error check catches a single wrong product") {
  const Shape s{16, 16, 16};
  const auto a = random_values(256, 3), b = random_values(256, 4);
  std::vector<double> ref(256);
  matmul::reference(s, a.data(), b.data(), ref.data());
  std::vector<float> c(256);
  matmul::v3_blas(s, a.data(), b.data(), c.data(), 1);
  c[37] += a[2 * 16 + 5] * b[5 * 16 + 5];  // one product counted twice
  CHECK(matmul::max_relative_error(s, a.data(), b.data(), c.data(), ref.data()) > matmul::error_tolerance(s));
}

TEST_CASE("matmul theory: the course's counts and the traffic of naive and tiled loops") {
  const Shape s{2, 3, 4};
  CHECK(matmul::multiplications(s) == 24);
  CHECK(matmul::additions(s) == 18);
  CHECK(matmul::flops(s) == 48);
  const Shape sq{1024, 1024, 1024};
  CHECK(matmul::flops(sq) == 2147483648.0);
  // Naive: 2k reads per output plus one write, fp32.
  CHECK(matmul::bytes_naive(sq) == 4.0 * (2.0 * 1024 * 1024 * 1024 + 1024 * 1024));
  // Tiled with 64-wide tiles: A read 16 times, B read 16 times, C written once.
  CHECK(matmul::bytes_tiled(sq, 64) == 4.0 * (16.0 * 1024 * 1024 * 2 + 1024 * 1024));
  // Perfect reuse of a square fp32 product: intensity n/6 FLOP per byte.
  CHECK(matmul::intensity(matmul::flops(sq), matmul::bytes_minimum(sq)) == doctest::Approx(1024.0 / 6));

  const MatmulLesson lesson;
  const auto values = lesson.theory(ParamValues::parse(lesson.params(), {"m=2", "n=3", "k=4"}));
  const matmul::MatmulTheory* t = values_as<matmul::MatmulTheory>(values);
  REQUIRE(t != nullptr);
  CHECK(t->mults == 24.0);
  CHECK(t->adds == 18.0);
  CHECK(t->flops == 48.0);
  CHECK(t->exact_scalar_ops == 42.0);
  CHECK(values->to_json()["exact_scalar_ops"] == 42.0);  // the export keeps the field's name
}

TEST_CASE("log-log slope of a power law is its exponent") {
  CHECK(fit_log_log_slope({64, 128, 256, 512}, {1, 8, 64, 512}) == doctest::Approx(3.0));
  CHECK(fit_log_log_slope({1, 2}, {5, 10}) == doctest::Approx(1.0));
}

TEST_CASE("block-tiled traffic: A read once per column of blocks, B once per row of blocks, C written once") {
  const Shape s{4096, 4096, 4096};
  // 128 x 128 blocks: A and B each read 32 times, C written once.
  CHECK(matmul::bytes_block_tiled(s, 128, 128) == 4.0 * (2 * 32.0 * 4096 * 4096 + 4096.0 * 4096));
  CHECK(matmul::bytes_block_tiled(s, 64, 64) == matmul::bytes_tiled(s, 64));  // the square case
  // Ragged: 130 rows need 2 row blocks of 128, 200 columns 2 column blocks of 128; bf16 inputs, fp32 output.
  const Shape r{130, 200, 10};
  CHECK(matmul::bytes_block_tiled(r, 128, 128, 2, 4) == 2.0 * (130 * 10 * 2 + 10 * 200 * 2) + 4.0 * 130 * 200);
  CHECK(matmul::bytes_once(s, 4, 4) == matmul::bytes_minimum(s));
  // The ladder's traffic only falls as tiles grow, and the library's lower bound is below every lab kernel.
  using matmul::Rung;
  CHECK(matmul::rung_bytes(Rung::Coalesced, s) > matmul::rung_bytes(Rung::SmemTiled, s));
  CHECK(matmul::rung_bytes(Rung::SmemTiled, s) > matmul::rung_bytes(Rung::Blocktile1d, s));
  CHECK(matmul::rung_bytes(Rung::Blocktile1d, s) > matmul::rung_bytes(Rung::Blocktile2d, s));
  CHECK(matmul::rung_bytes(Rung::WarpTiled, s) < matmul::rung_bytes(Rung::Blocktile1d, s));
  CHECK(matmul::rung_bytes(Rung::Cublas, s) < matmul::rung_bytes(Rung::WarpTiled, s));
  CHECK(matmul::rung_bytes(Rung::Bf16Mma, s) < matmul::rung_bytes(Rung::Tf32Mma, s));
  // 4096^3 with 128 x 128 tiles: 2 n^3 / (4 (2 n^3 / 128 + n^2)) = about 31.5 FLOP per byte.
  CHECK(matmul::intensity(matmul::flops(s), matmul::rung_bytes(Rung::WarpTiled, s)) ==
        doctest::Approx(2.0 * 4096 / (4 * (2.0 * 32 + 1))));
}

TEST_CASE("every warp-tile configuration is one the kernel's index arithmetic accepts") {
  for (const matmul::WarpTile& w : matmul::kWarpTiles) {
    CAPTURE(w.bm);
    CAPTURE(w.bn);
    CAPTURE(w.bk);
    CHECK(w.valid());
    CHECK(w.lanes_m() * w.lanes_n() == 32);
    CHECK(w.threads() * w.tm * w.tn == w.bm * w.bn);  // every output owned by one thread
    CHECK(w.a_copies_per_thread() * w.threads() * (w.a_regs ? 4 : 1) == w.bm * w.bk);
    CHECK(w.smem_bytes() <= (w.blocks_per_sm() == 2 ? 113 : 227) * 1024);  // the blocks it expects fit on one SM
    CHECK(w.b_copies_per_thread() * w.threads() * 4 == w.bk * w.bn);
    CHECK(w.smem_bytes() == 4 * w.stages * w.bk * (w.bm + 4 + w.bn + 4));
  }
  const matmul::WarpTile lesson = matmul::kWarpTiles[matmul::kLessonWarpTile];
  CHECK(lesson.threads() == 256);
  CHECK(lesson.smem_bytes() == 50688);  // 3 stages x 16 x (132 + 132) floats: over 48 KiB, asked for at launch
  // Broken shapes are refused: a warp of 64 lanes, outputs not in groups of 4, too much shared memory.
  CHECK_FALSE(matmul::WarpTile{128, 128, 16, 64, 64, 8, 8, 3}.valid());
  CHECK_FALSE(matmul::WarpTile{128, 128, 16, 64, 32, 6, 8, 3}.valid());
  CHECK_FALSE(matmul::WarpTile{128, 128, 128, 64, 32, 8, 8, 4}.valid());
}

TEST_CASE("the CPU matmul device: its three kernels in order, their byte counts, and products in the host's C") {
  int cancelled_checks = 0;
  const auto cpu = matmul::make_matmul_device(BackendKind::Cpu, 2, 64, [&] { ++cancelled_checks; });
  CHECK(std::string(cpu->timer()) == "steady_clock");
  CHECK(cpu->tiled_kernel_tile() == 64);
  CHECK_FALSE(cpu->calls_are_launches());
  const auto all = cpu->kernels([](std::string_view) { return true; });
  REQUIRE(all.size() == 3);
  CHECK(all[0].kernel == "v1_naive");
  CHECK(all[1].kernel == "v2_tiled");
  CHECK(all[2].kernel == "v3_blas");
  CHECK((!all[0].library && !all[1].library && all[2].library));
  CHECK(cpu->kernels([](std::string_view key) { return key == "tiled"; }).size() == 1);
  const Shape s{65, 3, 129};
  const matmul::WarpTile unused = matmul::kWarpTiles[matmul::kLessonWarpTile];
  CHECK(cpu->bytes(all[0], s, unused) == matmul::bytes_naive(s));
  CHECK(cpu->bytes(all[1], s, unused) == matmul::bytes_tiled(s, 64));
  CHECK(cpu->bytes(all[2], s, unused) == matmul::bytes_minimum(s));
  const auto a = random_values(s.m * s.k, 1), b = random_values(s.k * s.n, 2);
  std::vector<double> ref(static_cast<std::size_t>(s.m * s.n));
  matmul::reference(s, a.data(), b.data(), ref.data());
  std::vector<float> c(ref.size());
  const auto operands = cpu->operands(s, a.data(), b.data(), c.data());
  CHECK_FALSE(operands->tuned_warp_tile().has_value());
  for (const matmul::DeviceKernel& k : all) {
    std::fill(c.begin(), c.end(), -999.0f);
    const TimingStats t = operands->time(k, MeasureOptions{.warmup = 1, .repeats = 3}, true);
    INFO(k.kernel);
    CHECK(t.repeats == 3);
    CHECK(matmul::max_relative_error(s, a.data(), b.data(), c.data(), ref.data()) <= matmul::error_tolerance(s));
  }
  CHECK(cancelled_checks > 0);
}

TEST_CASE("the ladder's table: keys unique, one library per precision, CPU keys shared") {
  std::set<std::string_view> keys;
  for (const matmul::RungInfo& r : matmul::kLadder) {
    CHECK(keys.insert(r.key).second);
    CHECK(&matmul::rung_info(r.rung) == &r);  // the table is in the enum's order
    CHECK(matmul::rung_info(matmul::library_rung(r.precision)).library);
    CHECK(matmul::rung_info(matmul::library_rung(r.precision)).precision == r.precision);
  }
  for (const char* cpu_key : {"naive", "tiled", "blas"}) CHECK(keys.count(cpu_key) == 1);
}

TEST_CASE("error bounds per precision: fp32 accumulation, plus the rounding of each input for tf32 and bf16") {
  const Shape s{64, 64, 1000};
  const double fp32 = 2.0 * 1000 * std::ldexp(1.0, -24);
  CHECK(matmul::error_tolerance(matmul::Precision::Fp32, s) == fp32);
  CHECK(matmul::error_tolerance(matmul::Precision::Tf32, s) == doctest::Approx(2 * std::ldexp(1.0, -11) + fp32));
  CHECK(matmul::error_tolerance(matmul::Precision::Bf16, s) == doctest::Approx(2 * std::ldexp(1.0, -8) + fp32));
}

TEST_CASE("the sampled error check agrees with the full one, and catches NaN and a wrong corner") {
  const Shape s{37, 53, 29};
  const auto a = random_values(s.m * s.k, 5), b = random_values(s.k * s.n, 6);
  std::vector<double> ref(static_cast<std::size_t>(s.m * s.n));
  matmul::reference(s, a.data(), b.data(), ref.data());
  std::vector<float> c(ref.begin(), ref.end());
  // Sampling every entry many times over sees the largest error the full check sees, never more.
  const double full = matmul::max_relative_error(s, a.data(), b.data(), c.data(), ref.data());
  const double sampled = matmul::sampled_max_relative_error(s, a.data(), b.data(), c.data(), 20000);
  CHECK(sampled <= full * (1 + 1e-12) + 1e-300);
  CHECK(sampled <= matmul::error_tolerance(s));
  c.back() += 1.0f;  // the last corner, where a ragged edge tile ends: always among the samples
  CHECK(matmul::sampled_max_relative_error(s, a.data(), b.data(), c.data(), 4) > matmul::error_tolerance(s));
  c.back() = NAN;
  CHECK(std::isinf(matmul::sampled_max_relative_error(s, a.data(), b.data(), c.data(), 4)));
  CHECK(matmul::reference_is_sampled({2048, 2048, 2048}));
  CHECK_FALSE(matmul::reference_is_sampled({2048, 2048, 2047}));
}

TEST_CASE("on a GPU the lesson measures 4096^3 and sweeps to 8192; quick stays smaller") {
  const MatmulLesson lesson;
  const ParamValues gpu = ParamValues::parse(lesson.params(), lesson.gpu_params(false));
  CHECK(gpu.integer("m") == 4096);
  CHECK(gpu.list("sizes").back() == 8192);
  const ParamValues quick = ParamValues::parse(lesson.params(), lesson.gpu_params(true));
  CHECK(quick.integer("m") < 4096);
  CHECK(quick.list("sizes").back() <= 2048);
}
