// The oracle: double accumulation, straightforward loops. Slow on purpose; only correctness matters here.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/matmul/matmul.h"

namespace dlsys::matmul {

void reference(const Shape& s, const float* a, const float* b, double* c) {
  std::fill(c, c + s.m * s.n, 0.0);
  for (std::int64_t i = 0; i < s.m; ++i)
    for (std::int64_t l = 0; l < s.k; ++l) {
      const double a_il = a[i * s.k + l];
      for (std::int64_t j = 0; j < s.n; ++j) c[i * s.n + j] += a_il * b[l * s.n + j];
    }
}

double max_relative_error(const Shape& s, const float* a, const float* b, const float* c, const double* ref) {
  // sum_l |a_il| |b_lj| is the natural scale of the rounding error in c_ij (it bounds every partial sum).
  std::vector<double> scale(static_cast<std::size_t>(s.m * s.n), 0.0);
  for (std::int64_t i = 0; i < s.m; ++i)
    for (std::int64_t l = 0; l < s.k; ++l) {
      const double a_il = std::fabs(a[i * s.k + l]);
      for (std::int64_t j = 0; j < s.n; ++j) scale[i * s.n + j] += a_il * std::fabs(b[l * s.n + j]);
    }
  double worst = 0;
  for (std::int64_t e = 0; e < s.m * s.n; ++e) {
    const double err = std::fabs(double(c[e]) - ref[e]);
    worst = std::max(worst, scale[e] > 0 ? err / scale[e] : err);
    if (std::isnan(c[e])) return INFINITY;
  }
  return worst;
}

double sampled_max_relative_error(const Shape& s, const float* a, const float* b, const float* c, int samples,
                                  unsigned seed) {
  std::uint64_t state = seed;
  auto next = [&state](std::int64_t bound) {  // a 64-bit linear congruential step, high bits taken
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::int64_t>((state >> 33) % static_cast<std::uint64_t>(bound));
  };
  double worst = 0;
  for (int t = 0; t < samples; ++t) {
    const std::int64_t i = t == 0 || t == 1 ? 0 : t == 2 || t == 3 ? s.m - 1 : next(s.m);
    const std::int64_t j = t == 0 || t == 2 ? 0 : t == 1 || t == 3 ? s.n - 1 : next(s.n);
    double exact = 0, scale = 0;
    for (std::int64_t l = 0; l < s.k; ++l) {
      const double product = double(a[i * s.k + l]) * double(b[l * s.n + j]);
      exact += product;
      scale += std::fabs(product);
    }
    const float got = c[i * s.n + j];
    if (std::isnan(got)) return INFINITY;
    const double err = std::fabs(double(got) - exact);
    worst = std::max(worst, scale > 0 ? err / scale : err);
  }
  return worst;
}

bool reference_is_sampled(const Shape& s) { return double(s.m) * double(s.n) * double(s.k) >= 2048.0 * 2048 * 2048; }

double error_tolerance(const Shape& s) {
  // Worst-case recursive summation error is about k * u with u = 2^-24; blocked and vectorised sums do better, so
  // 2 * k * u leaves room for any order of summation while still catching a single wrong product.
  return 2.0 * double(std::max<std::int64_t>(s.k, 1)) * std::ldexp(1.0, -24);
}

}  // namespace dlsys::matmul
