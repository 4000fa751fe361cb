#pragma once
// The router of a mixture-of-experts layer: logits = x W + b, softmax over the E experts, the k most probable chosen,
// each with its probability as its gate (Switch Transformer's gate, not renormalised over the k). Then capacity:
// first choices are placed before second choices (GShard's priority), tokens in order, and an expert that already
// holds C assignments of this group drops the rest. A dropped assignment adds nothing to the token's output (the
// residual connection around the layer still carries the token).
//
// The load-balancing loss is Switch Transformer's (Fedus, Zoph and Shazeer 2021, eq. 4): E sum_i f_i P_i, f_i the
// share of the assignments routed to expert i (before capacity), P_i the router's mean probability for i; 1 when the
// load is even, E when every token goes to one expert. Training adds it scaled by alpha (0.01 in the paper) to the
// model's loss; here the router is trained on it alone, which only rescales the step.
#include <cstdint>
#include <vector>

#include "kernels/moe/moe_shape.h"

namespace dlsys::moe {

struct Router {
  std::int64_t hidden = 0;
  int experts = 0;
  std::vector<float> weights;  // (hidden, experts) row-major
  std::vector<float> bias;     // (experts)
};

// Random weights in +-3/sqrt(H), so that logits of inputs in [-1, 1) spread by about 1, and a bias -skew ln(e + 1):
// with skew s, expert e's share of a token's probability leans as Zipf's law, (e + 1)^-s (skew 0: no lean).
Router make_router(std::int64_t hidden, int experts, double skew, std::uint64_t seed);

struct Routing {
  std::int64_t tokens = 0;
  int top_k = 0;
  std::vector<int> expert;               // (tokens, k): chosen experts, most probable first
  std::vector<float> gate;               // (tokens, k): their probabilities
  std::vector<std::int64_t> slot;        // (tokens, k): place in the expert's queue, -1 when dropped
  std::vector<std::int64_t> wanted;      // per expert: assignments routed to it
  std::vector<std::int64_t> kept;        // per expert: min(wanted, C)
  std::vector<double> mean_probability;  // per expert: P_i
  std::int64_t dropped = 0;              // assignments over capacity
};

// Routes `tokens` rows of x (tokens, hidden) with the shape's k and capacity.
Routing route_tokens(const Router& router, const float* x, std::int64_t tokens, const MoeShape& shape);
// E sum_i f_i P_i, f_i from `wanted`.
double balance_loss(const Routing& routing);

// `steps` steps of gradient descent on the balance loss over x's tokens (f_i held fixed within a step, as it has no
// gradient; P_i's gradient through the softmax). Returns the loss before each step and after the last.
std::vector<double> train_for_balance(Router& router, const float* x, std::int64_t tokens, const MoeShape& shape,
                                      int steps, double learning_rate);

// Deterministic inputs in [-1, 1): a row's values depend on (seed, index) only.
void fill_uniform(float* out, std::int64_t count, std::uint64_t seed, float scale = 1.0f);

}  // namespace dlsys::moe
