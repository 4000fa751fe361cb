#include "kernels/moe/experts.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>

#include "kernels/moe/router.h"

namespace dlsys::moe {

Experts make_experts(int experts, std::int64_t hidden, std::int64_t ffn, std::uint64_t seed) {
  Experts out{experts, hidden, ffn, std::vector<float>(std::size_t(experts * hidden * ffn)),
              std::vector<float>(std::size_t(experts * ffn * hidden))};
  for (int e = 0; e < experts; ++e) {
    fill_uniform(out.w1.data() + e * hidden * ffn, hidden * ffn, seed + 2 * std::uint64_t(e) + 1,
                 float(1.0 / std::sqrt(double(hidden))));
    fill_uniform(out.w2.data() + e * ffn * hidden, ffn * hidden, seed + 2 * std::uint64_t(e) + 2,
                 float(1.0 / std::sqrt(double(ffn))));
  }
  return out;
}

void mlp_forward(const float* w1, const float* w2, std::int64_t hidden, std::int64_t ffn, const float* x,
                 std::int64_t rows, float* scratch, float* y) {
  if (rows == 0) return;
  const int m = int(rows), h = int(hidden), f = int(ffn);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, f, h, 1.0f, x, h, w1, f, 0.0f, scratch, f);
  for (std::int64_t i = 0; i < rows * ffn; ++i) scratch[i] = std::max(scratch[i], 0.0f);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, h, f, 1.0f, scratch, f, w2, h, 0.0f, y, h);
}

std::vector<double> mlp_reference(const float* w1, const float* w2, std::int64_t hidden, std::int64_t ffn,
                                  const float* x, std::int64_t rows) {
  std::vector<double> y(static_cast<std::size_t>(rows * hidden), 0.0), mid(static_cast<std::size_t>(ffn));
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t j = 0; j < ffn; ++j) {
      double sum = 0;
      for (std::int64_t i = 0; i < hidden; ++i) sum += double(x[r * hidden + i]) * w1[i * ffn + j];
      mid[std::size_t(j)] = std::max(sum, 0.0);
    }
    for (std::int64_t c = 0; c < hidden; ++c) {
      double sum = 0;
      for (std::int64_t j = 0; j < ffn; ++j) sum += mid[std::size_t(j)] * w2[j * hidden + c];
      y[std::size_t(r * hidden + c)] = sum;
    }
  }
  return y;
}

double mlp_rounding_factor(std::int64_t hidden, std::int64_t ffn) {
  const double u = std::ldexp(1.0, -24);
  const auto gamma = [u](std::int64_t n) { return double(n) * u / (1 - double(n) * u); };
  return 2 * (gamma(ffn) * (1 + gamma(hidden)) + gamma(hidden));
}

void MlpCheck::merge(const MlpCheck& other) {
  max_abs_diff = std::max(max_abs_diff, other.max_abs_diff);
  worst_share_of_bound = std::max(worst_share_of_bound, other.worst_share_of_bound);
  largest_bound = std::max(largest_bound, other.largest_bound);
}

MlpCheck check_mlp_outputs(const float* w1, const float* w2, std::int64_t hidden, std::int64_t ffn, const float* x,
                           std::int64_t rows, const float* reference, const float* y) {
  MlpCheck check;
  if (rows == 0) return check;
  // M = (|x| |W1|) |W2| as products of absolute values in double: loops would cost rows x 2 H F each.
  const auto absolute = [](const float* m, std::int64_t count) {
    std::vector<double> out(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i) out[std::size_t(i)] = std::fabs(double(m[i]));
    return out;
  };
  const std::vector<double> abs_x = absolute(x, rows * hidden), abs_w1 = absolute(w1, hidden * ffn),
                            abs_w2 = absolute(w2, ffn * hidden);
  std::vector<double> first(std::size_t(rows * ffn)), magnitude(std::size_t(rows * hidden));
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(rows), int(ffn), int(hidden), 1.0, abs_x.data(),
              int(hidden), abs_w1.data(), int(ffn), 0.0, first.data(), int(ffn));
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(rows), int(hidden), int(ffn), 1.0, first.data(), int(ffn),
              abs_w2.data(), int(hidden), 0.0, magnitude.data(), int(hidden));
  const double factor = mlp_rounding_factor(hidden, ffn);
  for (std::size_t at = 0; at < magnitude.size(); ++at) {
    const double diff = std::fabs(double(y[at]) - double(reference[at])), bound = factor * magnitude[at];
    check.max_abs_diff = std::max(check.max_abs_diff, diff);
    check.largest_bound = std::max(check.largest_bound, bound);
    // A NaN is never within its bound.
    const double share = std::isnan(diff) ? 2 : bound > 0 ? diff / bound : diff > 0 ? 2 : 0;
    check.worst_share_of_bound = std::max(check.worst_share_of_bound, share);
  }
  return check;
}

void CpuExpertMlps::forward(int rank, int expert, const float* x, std::int64_t rows, float* y) {
  std::vector<float>& hidden = hidden_rows_[std::size_t(rank)];
  hidden.resize(std::size_t(rows * experts_.ffn));
  mlp_forward(experts_.w1_of(expert), experts_.w2_of(expert), experts_.hidden, experts_.ffn, x, rows, hidden.data(), y);
}

}  // namespace dlsys::moe
