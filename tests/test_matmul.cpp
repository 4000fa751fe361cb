#include <doctest/doctest.h>

#include <vector>

#include "engine/params.h"
#include "kernels/matmul/matmul.h"
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
