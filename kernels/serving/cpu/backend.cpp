// The CPU model behind the scheduler's interface: slots are Sequences, rows point at them.
#include <algorithm>
#include <stdexcept>

#include "kernels/serving/cpu_backend.h"

namespace dlsys::serving {

CpuBackend::CpuBackend(Model& model, MemoryLedger& ledger, int slots) : model_(model) {
  if (slots < 1) throw std::logic_error("CpuBackend: at least one slot");
  for (int i = 0; i < slots; ++i) slots_.push_back(std::make_unique<Sequence>(model.shape(), model.layers(), ledger));
}

int CpuBackend::max_rows() const { return model_.max_rows(); }

int CpuBackend::prefill(int slot, const std::vector<int>& prompt) {
  Sequence& seq = *slots_.at(std::size_t(slot));
  seq.length = 0;
  return model_.prefill(seq, prompt);
}

void CpuBackend::forward(const std::vector<SlotRow>& rows, std::vector<int>& next) {
  rows_.clear();
  for (const SlotRow& r : rows) rows_.push_back({slots_.at(std::size_t(r.slot)).get(), r.token, r.position});
  model_.forward(rows_, next);
}

std::vector<float> CpuBackend::logits(int row) {
  const float* l = model_.logits(row);
  return {l, l + model_.shape().vocab};
}

std::int64_t cuda_model_bytes(const ModelShape& s, int layers, int slots, int max_rows) {
  const std::int64_t d = s.d_model, m = s.mlp_dim, L = layers;
  const std::int64_t rows = std::max<std::int64_t>(max_rows, s.context);
  const std::int64_t weights =
      2 * std::int64_t(s.vocab) * d + std::int64_t(s.context) * d + L * (4 * d * d + 2 * d * m);
  const std::int64_t caches = std::int64_t(slots) * kv_bytes_per_token(s, layers) / 4 * s.context;
  // x, h, q, k, v, attended (d each), up (mlp), logits (vocab) and every head's scores over the context per row;
  // tokens, positions, slots, next tokens (ints) per row.
  const std::int64_t scratch = rows * (6 * d + m + s.vocab + std::int64_t(s.heads) * s.context + 4);
  return 4 * (weights + caches + scratch);
}

}  // namespace dlsys::serving
