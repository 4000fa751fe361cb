// Seeded request streams by inverse transform sampling from one splitmix64 generator (not <random>'s distributions,
// whose outputs differ between standard libraries).
#include "kernels/serving/request_stream.h"

#include <algorithm>
#include <cmath>

namespace dlsys::serving {

namespace {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }

 private:
  std::uint64_t state_;
};

}  // namespace

std::vector<Request> make_stream(const StreamSpec& spec) {
  SplitMix64 random(spec.seed);
  const double p = 1.0 / std::max(1.0, spec.mean_output);
  std::vector<Request> out;
  double t = 0;
  for (int i = 0; i < spec.requests; ++i) {
    Request r;
    r.id = i;
    t += -std::log1p(-random.uniform()) / spec.rate_per_s;  // exponential gap
    r.arrival_s = t;
    // Geometric by inversion: L = 1 + floor(ln(1 - u) / ln(1 - p)); p = 1 gives L = 1.
    const double u = random.uniform();
    const double tail = p >= 1.0 ? 0.0 : std::floor(std::log1p(-u) / std::log1p(-p));
    r.output_tokens = int(std::min<double>(spec.max_output, 1.0 + tail));
    r.prompt.resize(std::size_t(spec.prompt_tokens));
    for (int& token : r.prompt) token = int(random.next() % std::uint64_t(spec.vocab));
    out.push_back(std::move(r));
  }
  return out;
}

double clamped_geometric_mean(double mean, int cut) {
  const double q = 1.0 - 1.0 / std::max(1.0, mean);
  // E[min(L, c)] = sum_{n=1..c} P(L >= n) = sum_{n=0..c-1} q^n.
  return q == 1.0 ? double(cut) : (1.0 - std::pow(q, cut)) / (1.0 - q);
}

}  // namespace dlsys::serving
