// reference: the decoder's forward pass over a whole prefix in plain double-precision loops, no BLAS, no cache.
// Slow on purpose and obviously right; both fp32 decode paths are checked against it.
#include <cmath>

#include "kernels/decoder/decoder.h"

namespace dlsys::decoder {

namespace {

using Matrix = std::vector<std::vector<double>>;  // rows of one vector each

// y = x W for W: (rows, cols) row-major fp32.
std::vector<double> times(const std::vector<double>& x, const float* w, int rows, int cols) {
  std::vector<double> y(cols, 0.0);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) y[c] += x[r] * double(w[std::int64_t(r) * cols + c]);
  return y;
}

std::vector<double> normalized(const std::vector<double>& x) {
  double sum_squares = 0;
  for (double v : x) sum_squares += v * v;
  const double inv = 1.0 / std::sqrt(sum_squares / double(x.size()) + 1e-5);
  std::vector<double> h(x);
  for (double& v : h) v *= inv;
  return h;
}

}  // namespace

std::vector<double> reference_logits(const Shape& s, const Weights& w, const std::vector<int>& tokens) {
  const int d = s.d_model, kv = s.kv_dim(), hd = s.head_dim(), group = s.heads / s.kv_heads;
  const std::size_t n = tokens.size();
  Matrix x(n, std::vector<double>(d));
  for (std::size_t i = 0; i < n; ++i)
    for (int c = 0; c < d; ++c)
      x[i][c] = double(w.embedding[std::size_t(tokens[i]) * d + c]) + double(w.position[i * d + c]);
  for (int l = 0; l < s.layers; ++l) {
    Matrix q(n), k(n), v(n);
    for (std::size_t i = 0; i < n; ++i) {
      const auto h = normalized(x[i]);
      q[i] = times(h, w.wq.data() + std::int64_t(l) * d * d, d, d);
      k[i] = times(h, w.wk.data() + std::int64_t(l) * d * kv, d, kv);
      v[i] = times(h, w.wv.data() + std::int64_t(l) * d * kv, d, kv);
    }
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<double> attended(d, 0.0);
      for (int head = 0; head < s.heads; ++head) {
        const int qo = head * hd, ko = (head / group) * hd;
        std::vector<double> p(i + 1);
        double max_score = -INFINITY, total = 0;
        for (std::size_t j = 0; j <= i; ++j) {
          double dot = 0;
          for (int c = 0; c < hd; ++c) dot += q[i][qo + c] * k[j][ko + c];
          p[j] = dot / std::sqrt(double(hd));
          max_score = std::max(max_score, p[j]);
        }
        for (double& pj : p) total += (pj = std::exp(pj - max_score));
        for (std::size_t j = 0; j <= i; ++j)
          for (int c = 0; c < hd; ++c) attended[qo + c] += p[j] / total * v[j][ko + c];
      }
      const auto out = times(attended, w.wo.data() + std::int64_t(l) * d * d, d, d);
      for (int c = 0; c < d; ++c) x[i][c] += out[c];
    }
  }
  return times(normalized(x[n - 1]), w.unembedding.data(), d, s.vocab);
}

}  // namespace dlsys::decoder
