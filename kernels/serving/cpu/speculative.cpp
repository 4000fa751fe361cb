// Speculative decoding over the serving model's row-independent forward pass: the k + 1 rows the target verifies
// give the same logits, bit for bit, as k + 1 single-token steps would.
#include "kernels/serving/speculative.h"

#include <algorithm>
#include <cmath>

namespace dlsys::serving {

std::vector<int> greedy_generate(ModelBackend& model, int slot, const std::vector<int>& prompt, int output_tokens) {
  std::vector<int> tokens{model.prefill(slot, prompt)};
  std::vector<int> next;
  while (int(tokens.size()) < output_tokens) {
    model.forward({{slot, tokens.back(), model.length(slot)}}, next);
    tokens.push_back(next.front());
  }
  return tokens;
}

SpeculativeResult speculative_generate(ModelBackend& target, ModelBackend& draft, const std::vector<int>& prompt,
                                       int output_tokens, int k) {
  constexpr int slot = 0;  // each model's first cache
  SpeculativeResult out;
  const std::int64_t prompt_n = std::int64_t(prompt.size());
  out.tokens.push_back(target.prefill(slot, prompt));
  draft.prefill(slot, prompt);
  // The whole sequence so far (prompt + generated): the draft catches up from it after a rejection.
  std::vector<int> all = prompt;
  all.push_back(out.tokens.front());
  std::vector<SlotRow> rows;
  std::vector<int> next;
  while (int(out.tokens.size()) < output_tokens) {
    const int want = std::min(k, output_tokens - int(out.tokens.size()) - 1);  // proposals still useful
    // Draft: feed what its cache lacks (the last kept tokens), then its own proposals, one pass per token.
    std::vector<int> proposals;
    if (want > 0) {
      rows.clear();
      for (std::int64_t p = draft.length(slot); p < std::int64_t(all.size()); ++p)
        rows.push_back({slot, all[std::size_t(p)], p});
      draft.forward(rows, next);
      ++out.draft_passes;
      proposals.push_back(next.back());
      while (int(proposals.size()) < want) {
        draft.forward({{slot, proposals.back(), draft.length(slot)}}, next);
        ++out.draft_passes;
        proposals.push_back(next.front());
      }
    }
    // Target: the last kept token and every proposal in one pass; row i predicts the token after position base + i.
    const std::int64_t base = std::int64_t(all.size()) - 1;
    rows.clear();
    rows.push_back({slot, all.back(), base});
    for (std::size_t i = 0; i < proposals.size(); ++i) rows.push_back({slot, proposals[i], base + 1 + std::int64_t(i)});
    target.forward(rows, next);
    ++out.target_passes;
    std::size_t kept = 0;
    while (kept < proposals.size() && proposals[kept] == next[kept]) ++kept;
    out.proposed += std::int64_t(proposals.size());
    out.accepted += std::int64_t(kept);
    if (kept < proposals.size()) ++out.rejections;
    for (std::size_t i = 0; i < kept; ++i) all.push_back(proposals[i]);
    all.push_back(next[kept]);  // the target's own token where the draft went wrong (or after the last proposal)
    // Caches keep only positions of kept tokens: everything past the newest token is stale and will be overwritten.
    target.set_length(slot, std::int64_t(all.size()) - 1);
    draft.set_length(slot, std::min<std::int64_t>(draft.length(slot), std::int64_t(all.size()) - 1));
    out.tokens.assign(all.begin() + prompt_n, all.end());
  }
  out.tokens.resize(std::size_t(output_tokens));
  return out;
}

// The CPU model with the caller's caches: a backend of one slot over each would allocate new ones, so these two
// adapt the given Sequences instead.
namespace {
class BorrowedSequence final : public ModelBackend {
 public:
  BorrowedSequence(Model& model, Sequence& seq) : model_(model), seq_(seq) {}
  const ModelShape& shape() const override { return model_.shape(); }
  int layers() const override { return model_.layers(); }
  int slots() const override { return 1; }
  int max_rows() const override { return model_.max_rows(); }
  std::int64_t length(int) const override { return seq_.length; }
  void set_length(int, std::int64_t length) override { seq_.length = length; }
  int prefill(int, const std::vector<int>& prompt) override { return model_.prefill(seq_, prompt); }
  void forward(const std::vector<SlotRow>& rows, std::vector<int>& next) override {
    rows_.clear();
    for (const SlotRow& r : rows) rows_.push_back({&seq_, r.token, r.position});
    model_.forward(rows_, next);
  }
  std::vector<float> logits(int row) override {
    const float* l = model_.logits(row);
    return {l, l + model_.shape().vocab};
  }
  const char* device() const override { return "cpu"; }

 private:
  Model& model_;
  Sequence& seq_;
  std::vector<Row> rows_;
};
}  // namespace

std::vector<int> greedy_generate(Model& model, Sequence& seq, const std::vector<int>& prompt, int output_tokens) {
  BorrowedSequence backend(model, seq);
  return greedy_generate(backend, 0, prompt, output_tokens);
}

SpeculativeResult speculative_generate(Model& target, Model& draft, Sequence& target_seq, Sequence& draft_seq,
                                       const std::vector<int>& prompt, int output_tokens, int k) {
  BorrowedSequence target_backend(target, target_seq), draft_backend(draft, draft_seq);
  return speculative_generate(target_backend, draft_backend, prompt, output_tokens, k);
}

double acceptance_rate(std::int64_t accepted, std::int64_t rejections) {
  return accepted + rejections > 0 ? double(accepted) / double(accepted + rejections) : 0.0;
}

double expected_tokens_per_pass(double a, int k) {
  return a >= 1.0 ? double(k + 1) : (1.0 - std::pow(a, k + 1)) / (1.0 - a);
}

}  // namespace dlsys::serving
