// Speculative decoding over the serving model's row-independent forward pass: the k + 1 rows the target verifies
// give the same logits, bit for bit, as k + 1 single-token steps would.
#include "kernels/serving/speculative.h"

#include <algorithm>
#include <cmath>

namespace dlsys::serving {

std::vector<int> greedy_generate(Model& model, Sequence& seq, const std::vector<int>& prompt, int output_tokens) {
  std::vector<int> tokens{model.prefill(seq, prompt)};
  std::vector<int> next;
  while (int(tokens.size()) < output_tokens) {
    model.forward({{&seq, tokens.back(), seq.length}}, next);
    tokens.push_back(next.front());
  }
  return tokens;
}

SpeculativeResult speculative_generate(Model& target, Model& draft, Sequence& target_seq, Sequence& draft_seq,
                                       const std::vector<int>& prompt, int output_tokens, int k) {
  SpeculativeResult out;
  const std::int64_t prompt_n = std::int64_t(prompt.size());
  out.tokens.push_back(target.prefill(target_seq, prompt));
  draft.prefill(draft_seq, prompt);
  // The whole sequence so far (prompt + generated): the draft catches up from it after a rejection.
  std::vector<int> all = prompt;
  all.push_back(out.tokens.front());
  std::vector<Row> rows;
  std::vector<int> next;
  while (int(out.tokens.size()) < output_tokens) {
    const int want = std::min(k, output_tokens - int(out.tokens.size()) - 1);  // proposals still useful
    // Draft: feed what its cache lacks (the last kept tokens), then its own proposals, one pass per token.
    std::vector<int> proposals;
    if (want > 0) {
      rows.clear();
      for (std::int64_t p = draft_seq.length; p < std::int64_t(all.size()); ++p)
        rows.push_back({&draft_seq, all[std::size_t(p)], p});
      draft.forward(rows, next);
      ++out.draft_passes;
      proposals.push_back(next.back());
      while (int(proposals.size()) < want) {
        draft.forward({{&draft_seq, proposals.back(), draft_seq.length}}, next);
        ++out.draft_passes;
        proposals.push_back(next.front());
      }
    }
    // Target: the last kept token and every proposal in one pass; row i predicts the token after position base + i.
    const std::int64_t base = std::int64_t(all.size()) - 1;
    rows.clear();
    rows.push_back({&target_seq, all.back(), base});
    for (std::size_t i = 0; i < proposals.size(); ++i)
      rows.push_back({&target_seq, proposals[i], base + 1 + std::int64_t(i)});
    target.forward(rows, next);
    ++out.target_passes;
    std::size_t kept = 0;
    while (kept < proposals.size() && proposals[kept] == next[kept]) ++kept;
    out.proposed += std::int64_t(proposals.size());
    out.accepted += std::int64_t(kept);
    for (std::size_t i = 0; i < kept; ++i) all.push_back(proposals[i]);
    all.push_back(next[kept]);  // the target's own token where the draft went wrong (or after the last proposal)
    // Caches keep only positions of kept tokens: everything past the newest token is stale and will be overwritten.
    target_seq.length = std::int64_t(all.size()) - 1;
    draft_seq.length = std::min<std::int64_t>(draft_seq.length, std::int64_t(all.size()) - 1);
    out.tokens.assign(all.begin() + prompt_n, all.end());
  }
  out.tokens.resize(std::size_t(output_tokens));
  return out;
}

double expected_tokens_per_pass(double a, int k) {
  return a >= 1.0 ? double(k + 1) : (1.0 - std::pow(a, k + 1)) / (1.0 - a);
}

}  // namespace dlsys::serving
