// The oracle: double accumulation, straightforward loops. Slow on purpose; only correctness matters here.
#include <algorithm>
#include <cmath>
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

double error_tolerance(const Shape& s) {
  // Worst-case recursive summation error is about k * u with u = 2^-24; blocked and vectorised sums do better, so
  // 2 * k * u leaves room for any order of summation while still catching a single wrong product.
  return 2.0 * double(std::max<std::int64_t>(s.k, 1)) * std::ldexp(1.0, -24);
}

}  // namespace dlsys::matmul
