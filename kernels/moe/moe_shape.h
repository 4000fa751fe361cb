#pragma once
// A mixture-of-experts layer's shape and its closed forms: the capacity of an expert, the bytes of the all-to-all
// that dispatches tokens to experts (and of the combine that brings them back), parameters and FLOP beside the dense
// MLP with the same active parameters.
//
// Expert parallelism: E experts over N ranks, E/N on each; every rank holds its own micro-batch of `tokens` tokens
// and routes them itself, so a rank's tokens are one group in GShard's sense and the capacity is per group: an expert
// accepts at most C of one rank's assignments, at most N C in all.
#include <cstdint>

namespace dlsys::moe {

struct MoeShape {
  std::int64_t tokens = 0;  // per rank
  std::int64_t hidden = 0;  // H: a token's width
  std::int64_t ffn = 0;     // F: an expert's hidden layer (H -> F -> H)
  int experts = 0;          // E
  int top_k = 0;            // k experts a token goes to
  double capacity_factor = 0;
  int ranks = 1;  // N: must divide E

  int experts_per_rank() const { return experts / ranks; }
  int rank_of_expert(int expert) const { return expert / experts_per_rank(); }
};

// C = ceil(capacity_factor x tokens x k / E): the assignments of one group an expert accepts; the rest are dropped.
std::int64_t expert_capacity(const MoeShape& shape);

// Bytes one rank's dispatch sends when each of its `tokens` goes to `top_k` experts: tokens x k x (hidden x
// element_bytes + the scales), with one 4-byte fp32 scale per `scale_block` elements (0: no scales, as in fp32 or
// bf16). DeepEP's low-latency dispatch (FP8 with a scale per 128 channels, its README's example): 128 x 8 x (7168 +
// 7168 / 128 x 4) = 7,569,408 B per rank.
std::int64_t dispatch_bytes_per_rank(std::int64_t tokens, int top_k, std::int64_t hidden, int element_bytes,
                                     int scale_block = 0);
// Of that, what leaves the rank when the experts are spread evenly: (N-1)/N (the share of experts elsewhere).
double off_rank_share(int ranks);

// Parameters: each expert 2 H F (two matrices, no biases), the router H E + E (a bias per expert).
std::int64_t expert_parameters(const MoeShape& shape);
std::int64_t router_parameters(const MoeShape& shape);
// The dense MLP a token sees as much of: H -> k F -> H, 2 H k F parameters, the same FLOP per token as k experts.
std::int64_t dense_ffn(const MoeShape& shape);
std::int64_t dense_parameters(const MoeShape& shape);
// FLOP of one row through an MLP H -> F -> H: two GEMMs, 2 H F multiply-adds.
double mlp_flop_per_row(std::int64_t hidden, std::int64_t ffn);

}  // namespace dlsys::moe
