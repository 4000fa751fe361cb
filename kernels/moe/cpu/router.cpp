#include "kernels/moe/router.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace dlsys::moe {

namespace {

std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// probabilities: (tokens, E), the softmax of x W + b.
std::vector<float> router_probabilities(const Router& r, const float* x, std::int64_t tokens) {
  const auto e = std::size_t(r.experts);
  std::vector<float> p(std::size_t(tokens) * e);
  for (std::int64_t t = 0; t < tokens; ++t)
    std::copy(r.bias.begin(), r.bias.end(), p.begin() + std::ptrdiff_t(t) * r.experts);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(tokens), r.experts, int(r.hidden), 1.0f, x, int(r.hidden),
              r.weights.data(), r.experts, 1.0f, p.data(), r.experts);
  for (std::int64_t t = 0; t < tokens; ++t) {
    float* row = p.data() + t * r.experts;
    const float top = *std::max_element(row, row + r.experts);
    double sum = 0;
    for (int i = 0; i < r.experts; ++i) sum += (row[i] = std::exp(row[i] - top));
    for (int i = 0; i < r.experts; ++i) row[i] = float(row[i] / sum);
  }
  return p;
}

// The k most probable experts of one token, most probable first (ties to the lower index).
std::vector<int> top_k_of(const float* row, int experts, int k) {
  std::vector<int> order(static_cast<std::size_t>(experts));
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](int a, int b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
  order.resize(std::size_t(k));
  return order;
}

}  // namespace

void fill_uniform(float* out, std::int64_t count, std::uint64_t seed, float scale) {
  const std::uint64_t base = splitmix(seed);
  for (std::int64_t i = 0; i < count; ++i) {
    const std::uint64_t bits = splitmix(base ^ std::uint64_t(i));
    out[i] = scale * (float(bits >> 40) / float(1 << 23) - 1.0f);  // 24 bits: [-1, 1)
  }
}

Router make_router(std::int64_t hidden, int experts, double skew, std::uint64_t seed) {
  Router r{hidden, experts, std::vector<float>(std::size_t(hidden * experts)),
           std::vector<float>(std::size_t(experts))};
  fill_uniform(r.weights.data(), hidden * experts, seed, float(3.0 / std::sqrt(double(hidden))));
  for (int e = 0; e < experts; ++e) r.bias[std::size_t(e)] = float(-skew * std::log(e + 1.0));
  return r;
}

Routing route_tokens(const Router& router, const float* x, std::int64_t tokens, const MoeShape& shape) {
  const int k = shape.top_k, experts = shape.experts;
  const std::vector<float> p = router_probabilities(router, x, tokens);
  Routing out;
  out.tokens = tokens;
  out.top_k = k;
  out.expert.resize(std::size_t(tokens * k));
  out.gate.resize(out.expert.size());
  out.slot.assign(out.expert.size(), -1);
  out.wanted.assign(std::size_t(experts), 0);
  out.kept.assign(std::size_t(experts), 0);
  out.mean_probability.assign(std::size_t(experts), 0.0);
  for (std::int64_t t = 0; t < tokens; ++t) {
    const float* row = p.data() + t * experts;
    const std::vector<int> chosen = top_k_of(row, experts, k);
    for (int j = 0; j < k; ++j) {
      const auto at = std::size_t(t * k + j);
      out.expert[at] = chosen[std::size_t(j)];
      out.gate[at] = row[chosen[std::size_t(j)]];
      ++out.wanted[std::size_t(chosen[std::size_t(j)])];
    }
    for (int i = 0; i < experts; ++i) out.mean_probability[std::size_t(i)] += row[i] / double(tokens);
  }
  const std::int64_t capacity = expert_capacity(shape);
  for (int j = 0; j < k; ++j)  // every first choice before any second choice
    for (std::int64_t t = 0; t < tokens; ++t) {
      const auto at = std::size_t(t * k + j);
      std::int64_t& held = out.kept[std::size_t(out.expert[at])];
      if (held < capacity)
        out.slot[at] = held++;
      else
        ++out.dropped;
    }
  return out;
}

double balance_loss(const Routing& routing) {
  const double assignments = double(routing.tokens) * routing.top_k;
  double sum = 0;
  for (std::size_t i = 0; i < routing.wanted.size(); ++i)
    sum += double(routing.wanted[i]) / assignments * routing.mean_probability[i];
  return double(routing.wanted.size()) * sum;
}

std::vector<double> train_for_balance(Router& router, const float* x, std::int64_t tokens, const MoeShape& shape,
                                      int steps, double learning_rate) {
  const int experts = shape.experts;
  std::vector<double> losses;
  std::vector<float> dz(std::size_t(tokens * experts));
  for (int step = 0;; ++step) {
    const Routing routing = route_tokens(router, x, tokens, shape);
    losses.push_back(balance_loss(routing));
    if (step == steps) break;
    // L = E sum_i f_i P_i, P_i = mean_t p_ti: dL/dp_ti = E f_i / T = g_i; through the softmax,
    // dL/dz_tj = p_tj (g_j - sum_i p_ti g_i).
    std::vector<double> g(static_cast<std::size_t>(experts));
    for (int i = 0; i < experts; ++i)
      g[std::size_t(i)] = experts * double(routing.wanted[std::size_t(i)]) / (double(tokens) * shape.top_k) / tokens;
    const std::vector<float> p = router_probabilities(router, x, tokens);
    std::vector<double> bias_grad(std::size_t(experts), 0.0);
    for (std::int64_t t = 0; t < tokens; ++t) {
      const float* row = p.data() + t * experts;
      double mean = 0;
      for (int i = 0; i < experts; ++i) mean += row[i] * g[std::size_t(i)];
      for (int j = 0; j < experts; ++j) {
        const double d = row[j] * (g[std::size_t(j)] - mean);
        dz[std::size_t(t * experts + j)] = float(d);
        bias_grad[std::size_t(j)] += d;
      }
    }
    // W -= lr x^T dz
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, int(router.hidden), experts, int(tokens),
                float(-learning_rate), x, int(router.hidden), dz.data(), experts, 1.0f, router.weights.data(), experts);
    for (int j = 0; j < experts; ++j) router.bias[std::size_t(j)] -= float(learning_rate * bias_grad[std::size_t(j)]);
  }
  return losses;
}

}  // namespace dlsys::moe
