// The oracle: each output row in double, straight from the definition with the row max subtracted (softmax is
// shift-invariant, so the max changes nothing but keeps every exp <= 1). Rows are independent, so threads share them.
#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/parallel.h"
#include "kernels/attention/attention.h"
#include "kernels/common/seeded_fill.h"

namespace dlsys::attention {

void reference(const Problem& p, const float* q, const float* k, const float* v, double* o, int threads) {
  parallel_for(p.n, threads, [&](std::int64_t row_begin, std::int64_t row_end) {
    std::vector<double> weights(static_cast<std::size_t>(p.n));  // (n): scores, then exp(s - max)
    for (std::int64_t i = row_begin; i < row_end; ++i) {
      const std::int64_t visible = p.causal ? i + 1 : p.n;
      double row_max = -INFINITY;
      for (std::int64_t j = 0; j < visible; ++j) {
        double s = 0;
        for (std::int64_t e = 0; e < p.d; ++e) s += double(q[i * p.d + e]) * double(k[j * p.d + e]);
        weights[j] = p.scale * s;
        row_max = std::max(row_max, weights[j]);
      }
      double sum = 0;
      for (std::int64_t j = 0; j < visible; ++j) sum += (weights[j] = std::exp(weights[j] - row_max));
      double* o_row = o + i * p.d;
      std::fill(o_row, o_row + p.d, 0.0);
      for (std::int64_t j = 0; j < visible; ++j)
        for (std::int64_t e = 0; e < p.d; ++e) o_row[e] += weights[j] * double(v[j * p.d + e]);
      for (std::int64_t e = 0; e < p.d; ++e) o_row[e] /= sum;
    }
  });
}

double max_abs_error(std::span<const float> o, std::span<const double> ref) {
  double worst = 0;
  for (std::size_t e = 0; e < o.size(); ++e) {
    if (std::isnan(o[e])) return INFINITY;
    worst = std::max(worst, std::fabs(double(o[e]) - ref[e]));
  }
  return worst;
}

void fill_uniform(std::span<float> values, std::uint32_t seed) { fill_seeded_uniform(values, seed); }

}  // namespace dlsys::attention
