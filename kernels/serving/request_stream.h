#pragma once
// A seeded stream of generation requests: Poisson arrivals (exponential gaps of mean 1 / rate) and output lengths
// drawn from a geometric distribution (P(L = n) = p (1 - p)^(n - 1), n >= 1, mean 1 / p), cut at `max_output`. The
// geometric law is skewed the way chat traffic is: most answers short, a few long, and the long ones are what a
// static batch waits for. Every number comes from one 64-bit generator, so a seed gives the same stream on any
// machine and library.
#include <cstdint>
#include <vector>

namespace dlsys::serving {

struct StreamSpec {
  int requests = 64;
  double rate_per_s = 100;
  int prompt_tokens = 64;
  double mean_output = 32;  // of the geometric law before the cut
  int max_output = 128;     // lengths above are cut to this
  int vocab = 256;
  std::uint64_t seed = 1;
};

struct Request {
  int id = 0;
  double arrival_s = 0;  // after the stream's start
  std::vector<int> prompt;
  int output_tokens = 1;  // tokens to generate, the first one from prefill
};

std::vector<Request> make_stream(const StreamSpec& spec);

// The mean of min(L, cut) for L geometric with mean `mean` (p = 1 / mean): sum over n < cut of (1 - p)^n.
double clamped_geometric_mean(double mean, int cut);

}  // namespace dlsys::serving
