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

}  // namespace dlsys::moe
