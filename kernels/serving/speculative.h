#pragma once
// Speculative decoding with greedy verification (Leviathan et al., ICML 2023; here without sampling): a draft model
// proposes k tokens one at a time, the target model checks all of them in one pass over k + 1 positions, and the
// longest prefix the target agrees with is kept, plus the target's own token after it. Every kept token is one the
// target would have chosen itself, so the output equals the target's greedy output exactly; what the draft changes
// is how many target passes it takes.
#include <cstdint>
#include <vector>

#include "kernels/serving/backend.h"
#include "kernels/serving/model.h"

namespace dlsys::serving {

struct SpeculativeResult {
  std::vector<int> tokens;      // the generated tokens, the first from the target's prefill
  int target_passes = 0;        // verification passes (the prefill not counted)
  int draft_passes = 0;         // one token each
  std::int64_t proposed = 0;    // draft tokens offered to the target
  std::int64_t accepted = 0;    // of those, kept
  std::int64_t rejections = 0;  // passes that rejected a proposal (the ones after it were never tested)
};

// The per-proposal acceptance rate the formula below takes: accepted / (accepted + rejections). A pass tests its
// proposals in order only up to the first rejection, so proposals after it say nothing about a; dividing by every
// proposal would count them as rejected.
double acceptance_rate(std::int64_t accepted, std::int64_t rejections);

// Generates `output_tokens` for `prompt` with `draft` proposing `k` at a time and `target` verifying; `target_seq`
// and `draft_seq` are caches for each model (overwritten).
SpeculativeResult speculative_generate(Model& target, Model& draft, Sequence& target_seq, Sequence& draft_seq,
                                       const std::vector<int>& prompt, int output_tokens, int k);

// The target alone, one token per pass: the reference the speculative output must equal.
std::vector<int> greedy_generate(Model& model, Sequence& seq, const std::vector<int>& prompt, int output_tokens);

// Expected tokens per target pass when each proposal is accepted independently with probability a:
// (1 - a^(k+1)) / (1 - a) (Leviathan et al., 2023), k + 1 at a = 1.
// The same over any backend, in slot 0 of each model (the target's greedy reference in `slot`).
SpeculativeResult speculative_generate(ModelBackend& target, ModelBackend& draft, const std::vector<int>& prompt,
                                       int output_tokens, int k);
std::vector<int> greedy_generate(ModelBackend& model, int slot, const std::vector<int>& prompt, int output_tokens);

double expected_tokens_per_pass(double acceptance, int k);

}  // namespace dlsys::serving
