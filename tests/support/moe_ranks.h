#pragma once
// The moe tests' rank inputs and the single-rank reference of them: each rank's tokens seeded by its rank, its
// reference outputs, and outputs to fill (set to -1 so a row left unwritten shows).
#include <cstdint>
#include <vector>

#include "kernels/moe/moe_layer.h"

namespace dlsys::testing {

// Rank r's micro-batch `micro_batch` of (tokens, H) inputs.
inline std::vector<float> moe_inputs_of(const moe::MoeShape& s, int rank, int micro_batch = 0) {
  std::vector<float> x(std::size_t(s.tokens * s.hidden));
  moe::fill_uniform(x.data(), s.tokens * s.hidden, 1000 + 17 * std::uint64_t(rank) + 7919 * std::uint64_t(micro_batch));
  return x;
}

struct MoeRanks {
  std::vector<std::vector<float>> x, reference, y;
  std::vector<moe::Routing> routings;  // the reference's, per rank
};
inline MoeRanks moe_ranks_with_reference(const moe::MoeShape& s, const moe::Router& router,
                                         const moe::Experts& experts) {
  MoeRanks ranks;
  std::vector<const float*> in;
  std::vector<float*> out;
  for (int r = 0; r < s.ranks; ++r) {
    ranks.x.push_back(moe_inputs_of(s, r));
    ranks.reference.emplace_back(ranks.x.back().size());
    ranks.y.emplace_back(ranks.x.back().size(), -1.0f);
  }
  for (int r = 0; r < s.ranks; ++r) {
    in.push_back(ranks.x[std::size_t(r)].data());
    out.push_back(ranks.reference[std::size_t(r)].data());
  }
  ranks.routings = moe::reference_layer(s, router, experts, in, out);
  return ranks;
}

}  // namespace dlsys::testing
