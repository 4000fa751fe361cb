// One row of the online softmax, kept readable rather than fast: it is the worked example's engine and the yardstick
// for the tiled kernel's per-row state.
#include "kernels/attention/online_softmax.h"

#include <algorithm>
#include <cmath>

#include "kernels/attention/tile_math.h"

namespace dlsys::attention {

OnlineSoftmaxRow online_softmax_row(std::span<const double> scores, std::span<const double> values, std::int64_t dv,
                                    std::int64_t tile) {
  OnlineSoftmaxRow row;
  const std::int64_t n = std::int64_t(scores.size());
  double m = -INFINITY, l = 0;
  std::vector<double> z(static_cast<std::size_t>(dv), 0.0);
  for (std::int64_t first = 0; first < n; first += tile) {
    OnlineSoftmaxStep step;
    step.first = first;
    step.count = std::min(tile, n - first);
    step.m_tile = *std::max_element(scores.begin() + first, scores.begin() + first + step.count);
    step.z_tile.assign(static_cast<std::size_t>(dv), 0.0);
    for (std::int64_t j = first; j < first + step.count; ++j) {
      const double w = std::exp(scores[j] - step.m_tile);
      step.l_tile += w;
      for (std::int64_t e = 0; e < dv; ++e) step.z_tile[e] += w * values[j * dv + e];
    }
    const MergeFactors<double> f = merge_factors(m, l, step.m_tile, step.l_tile);
    step.m_old = m;
    step.l_old = l;
    step.alpha = f.alpha;
    step.beta = f.beta;
    for (std::int64_t e = 0; e < dv; ++e) z[e] = f.alpha * z[e] + f.beta * step.z_tile[e];
    m = step.m = f.m_new;
    l = step.l = f.l_new;
    step.z = z;
    row.steps.push_back(std::move(step));
  }
  for (double& x : z) x /= l;
  row.o = std::move(z);
  return row;
}

std::vector<double> softmax_weights(std::span<const double> scores) {
  const double m = *std::max_element(scores.begin(), scores.end());
  std::vector<double> w(scores.size());
  double sum = 0;
  for (std::size_t j = 0; j < scores.size(); ++j) sum += (w[j] = std::exp(scores[j] - m));
  for (double& x : w) x /= sum;
  return w;
}

std::vector<double> weighted_sum(std::span<const double> weights, std::span<const double> values, std::int64_t dv) {
  std::vector<double> o(static_cast<std::size_t>(dv), 0.0);
  for (std::size_t j = 0; j < weights.size(); ++j)
    for (std::int64_t e = 0; e < dv; ++e) o[e] += weights[j] * values[j * dv + e];
  return o;
}

}  // namespace dlsys::attention
