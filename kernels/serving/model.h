#pragma once
// The serving lesson's model: the kvcache lesson's decoder (kernels/decoder) grown into a whole small transformer
// layer stack (pre-RMSNorm attention with a KV cache, then a ReLU MLP, both residual), served to many sequences.
//
// Two ways to push rows through it, and why both exist:
//   prefill - one sequence's whole prompt at once: every projection is one OpenBLAS sgemm over the prompt's rows
//             (matrix-matrix work, the weights reused by every row).
//   forward - any rows of any sequences (one new token of each of eight sequences, or the k + 1 tokens a speculative
//             step verifies): every projection goes through `project_rows`, whose result for one row never depends
//             on the other rows. So a sequence's tokens are the same bit for bit whichever batch it was decoded in, and
//             whatever the policy; the weights are still read once per pass for all rows.
// Attention is the decoder's own `attention_row`, over each sequence's own cache and length.
#include <cstdint>
#include <vector>

#include "engine/host_buffer.h"
#include "engine/ledger.h"
#include "kernels/serving/shape.h"

namespace dlsys::serving {

// Seeded random weights, recorded under "weights". Layers from `quiet_from` on have their output projections (the
// attention's W_o and the MLP's W_down) scaled by `quiet_scale`: they nudge the residual stream rather than rewrite
// it, so a draft made of the first `quiet_from` layers agrees with the whole stack most of the time.
struct Weights {
  HostBuffer<float> embedding;    // (vocab, d)
  HostBuffer<float> position;     // (context, d)
  HostBuffer<float> wq, wk, wv;   // (layers, d, d)
  HostBuffer<float> wo;           // (layers, d, d)
  HostBuffer<float> w_up;         // (layers, d, mlp)
  HostBuffer<float> w_down;       // (layers, mlp, d)
  HostBuffer<float> unembedding;  // (d, vocab)
};
Weights make_weights(const ModelShape& shape, MemoryLedger& ledger, std::uint32_t seed, int quiet_from,
                     float quiet_scale);
// Flushes every weight matrix from the CPU's caches (kernels/common/cache_flush.h); false where the CPU cannot.
bool evict_weights_from_caches(const Weights& w);
inline WeightPointers pointers(const Weights& w) {
  return {w.embedding.data(), w.position.data(), w.wq.data(),     w.wk.data(),         w.wv.data(),
          w.wo.data(),        w.w_up.data(),     w.w_down.data(), w.unembedding.data()};
}

// One sequence's KV cache for `layers` layers, contiguous per layer, for the model's whole context.
class Sequence {
 public:
  Sequence(const ModelShape& shape, int layers, MemoryLedger& ledger);
  float* k(int layer) { return k_.data() + std::int64_t(layer) * context_ * d_; }  // (context, d)
  float* v(int layer) { return v_.data() + std::int64_t(layer) * context_ * d_; }
  // Positions 0..length-1 hold K and V; the next token goes to position `length`.
  std::int64_t length = 0;

 private:
  std::int64_t context_, d_;
  HostBuffer<float> k_, v_;
};

// One row of a forward pass: the token fed at `position` of `sequence` (position <= sequence.length).
struct Row {
  Sequence* sequence = nullptr;
  int token = 0;
  std::int64_t position = 0;
};

// The first `layers` layers of the weights with the shared output head: the whole model, or a draft built from it.
class Model {
 public:
  Model(const ModelShape& shape, const Weights& weights, int layers, MemoryLedger& ledger, int max_rows);
  int layers() const { return layers_; }
  const ModelShape& shape() const { return shape_; }
  int max_rows() const { return max_rows_; }
  const Weights& weights() const { return weights_; }
  // The last pass's logits of `row` (after a prefill: row 0, the last prompt position's).
  const float* logits(std::int64_t row) const { return logits_.data() + row * shape_.vocab; }

  // Runs the prompt through (sgemm per projection), fills the cache, sets sequence.length = prompt size, and returns
  // the greedy first generated token.
  int prefill(Sequence& sequence, const std::vector<int>& prompt);
  // Runs the rows through (row-independent projections), writes their K and V at their positions, and writes each
  // row's greedy next token to `next` (rows.size()). Sequences' lengths become max(length, position + 1).
  void forward(const std::vector<Row>& rows, std::vector<int>& next);

  // Matmul FLOPs of one token's pass (2 per parameter met) and its attention FLOPs over `attended` keys.
  double token_matmul_flops() const;
  double token_attention_flops(std::int64_t attended) const;

 private:
  void layer_pass(int layer, std::int64_t n, const std::vector<Row>* rows, Sequence* prefill_sequence, bool gemm);
  ModelShape shape_;
  const Weights& weights_;
  int layers_, max_rows_;
  HostBuffer<float> x_, h_, q_, k_, v_, attended_, up_, logits_;  // (max_rows, ...) scratch
  HostBuffer<float> scores_;                                      // (context)
};

// y (n, cols) = beta y + x (n, rows) W, W: (rows, cols) row-major. Each output row is summed over `rows` in order by
// the same code whatever n is, so one row's result never depends on the others.
void project_rows(const float* x, std::int64_t n, const float* w, int rows, int cols, float* y, float beta);

// Greedy decoding: index of the largest logit, the first on ties.
int argmax(const float* logits, int count);

}  // namespace dlsys::serving
