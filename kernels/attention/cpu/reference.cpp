// The oracle: each output row in double, straight from the definition with the row max subtracted (softmax is
// shift-invariant, so the max changes nothing but keeps every exp <= 1). Rows are independent, so threads share them.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "engine/parallel.h"
#include "kernels/attention/attention.h"
#include "kernels/common/seeded_fill.h"

namespace dlsys::attention {

namespace {

// Row i of o into o_row (d); weights: n doubles of scratch.
void reference_row(const Problem& p, const float* q, const float* k, const float* v, std::int64_t i,
                   std::vector<double>& weights, double* o_row) {
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
  std::fill(o_row, o_row + p.d, 0.0);
  for (std::int64_t j = 0; j < visible; ++j)
    for (std::int64_t e = 0; e < p.d; ++e) o_row[e] += weights[j] * double(v[j * p.d + e]);
  for (std::int64_t e = 0; e < p.d; ++e) o_row[e] /= sum;
}

}  // namespace

void reference(const Problem& p, const float* q, const float* k, const float* v, double* o, int threads) {
  parallel_for(p.n, threads, [&](std::int64_t row_begin, std::int64_t row_end) {
    std::vector<double> weights(static_cast<std::size_t>(p.n));  // (n): scores, then exp(s - max)
    for (std::int64_t i = row_begin; i < row_end; ++i) reference_row(p, q, k, v, i, weights, o + i * p.d);
  });
}

std::vector<std::int64_t> sample_rows(std::int64_t n, std::int64_t count) {
  std::vector<std::int64_t> rows;
  if (n <= count) {
    for (std::int64_t i = 0; i < n; ++i) rows.push_back(i);
    return rows;
  }
  for (std::int64_t s = 0; s < count; ++s) rows.push_back(count == 1 ? 0 : s * (n - 1) / (count - 1));
  return rows;
}

void reference_rows(const Problem& p, const float* q, const float* k, const float* v,
                    std::span<const std::int64_t> rows, double* out, int threads) {
  parallel_for(std::int64_t(rows.size()), threads, [&](std::int64_t begin, std::int64_t end) {
    std::vector<double> weights(static_cast<std::size_t>(p.n));
    for (std::int64_t r = begin; r < end; ++r) reference_row(p, q, k, v, rows[std::size_t(r)], weights, out + r * p.d);
  });
}

double max_abs_error_rows(const Problem& p, const float* o, std::span<const std::int64_t> rows,
                          std::span<const double> ref) {
  double worst = 0;
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (std::int64_t e = 0; e < p.d; ++e) {
      const float x = o[rows[r] * p.d + e];
      if (std::isnan(x)) return INFINITY;
      worst = std::max(worst, std::fabs(double(x) - ref[r * std::size_t(p.d) + std::size_t(e)]));
    }
  return worst;
}

float round_to_bf16(float x) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &x, sizeof bits);
  if ((bits & 0x7f800000u) != 0x7f800000u) bits += 0x7fffu + ((bits >> 16) & 1u);  // ties to even; inf/NaN kept
  bits &= 0xffff0000u;
  float out = 0;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

void round_to_bf16(std::span<float> values) {
  for (float& x : values) x = round_to_bf16(x);
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
