#pragma once
// A small decoder-only transformer that really generates tokens, built to show what the KV cache buys.
// Layers are attention only (pre-RMSNorm, multi-head or grouped-query attention, residual; no MLP, which a cache does
// not touch), weights random fp32, greedy decoding over a small vocabulary. Two ways to decode the same model:
//   CachedDecoder    - keeps K and V of every past token for every layer (the KV cache). A step projects one token
//                      (matrix-vector) and reads the cache: O(d^2 + t d) work per layer at position t.
//   RecomputeDecoder - keeps only the token ids. A step runs the whole prefix through every layer again, because
//                      layer l's K and V depend on layer l-1's outputs for every token: O(t d^2 + t^2 d) per layer.
//   reference        - plain loops in double precision over the whole prefix: the oracle both are checked against.
// Both fp32 paths call the same attention routine, so the cache changes where K and V come from, not the arithmetic.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/host_buffer.h"
#include "engine/ledger.h"
#include "kernels/decoder/shape.h"

namespace dlsys::decoder {

// Throws BadInput unless heads divides d_model and kv_heads divides heads.
void check_shape(const Shape& shape);

// Random weights, recorded in the ledger under "weights". Row-major, y = x W for a row vector x.
// Positions are learned-style embeddings (as in GPT-2), one row per position up to `max_positions`.
struct Weights {
  HostBuffer<float> embedding;    // (vocab, d_model)
  HostBuffer<float> position;     // (max_positions, d_model)
  HostBuffer<float> wq;           // (layers, d_model, d_model)
  HostBuffer<float> wk;           // (layers, d_model, kv_dim)
  HostBuffer<float> wv;           // (layers, d_model, kv_dim)
  HostBuffer<float> wo;           // (layers, d_model, d_model)
  HostBuffer<float> unembedding;  // (d_model, vocab)
};
Weights make_random_weights(const Shape& shape, std::int64_t max_positions, MemoryLedger& ledger, std::uint32_t seed);
std::int64_t weights_bytes(const Shape& shape, std::int64_t max_positions);

// What a cache for `tokens` positions holds: K and V, every layer, fp32.
//   2 x layers x kv_heads x head_dim x 4 bytes per token (the lesson's formula with fp32 elements).
std::int64_t kv_cache_bytes(const Shape& shape, std::int64_t tokens);
// Everything a run of both decoders for `tokens` positions allocates (weights, cache, scratch), for the fits check.
std::int64_t run_bytes(const Shape& shape, std::int64_t tokens);

// Multiply-adds x 2 of one decode step at 0-based `position` (the prefix holds position + 1 tokens).
double flops_cached_step(const Shape& shape, std::int64_t position);
double flops_recompute_step(const Shape& shape, std::int64_t position);

class CachedDecoder {
 public:
  // Allocates the KV cache for `max_tokens` positions under the ledger tag "kv".
  CachedDecoder(const Shape& shape, const Weights& weights, MemoryLedger& ledger, std::int64_t max_tokens);
  // Feeds the token at the next position and writes the next-token logits: (vocab).
  void step(int token, float* logits);
  // Starts a new sequence in the same cache (no reallocation).
  void reset() { position_ = 0; }
  // Forgets the last `steps` positions, so the next step repeats one already taken (to time it again).
  void rewind(std::int64_t steps) { position_ -= std::min(steps, position_); }
  std::int64_t position() const { return position_; }

 private:
  Shape shape_;
  const Weights& weights_;
  std::int64_t max_tokens_;
  std::int64_t position_ = 0;
  HostBuffer<float> k_cache_;                        // (layers, max_tokens, kv_dim)
  HostBuffer<float> v_cache_;                        // (layers, max_tokens, kv_dim)
  HostBuffer<float> x_, h_, q_, attended_, scores_;  // (d), (d), (d), (d), (max_tokens)
};

class RecomputeDecoder {
 public:
  // Scratch for a whole prefix of `max_tokens` is allocated once, under "scratch": nothing is kept between steps
  // except the token ids.
  RecomputeDecoder(const Shape& shape, const Weights& weights, MemoryLedger& ledger, std::int64_t max_tokens);
  void step(int token, float* logits);
  void reset() { tokens_.clear(); }
  void rewind(std::int64_t steps) { tokens_.resize(tokens_.size() - std::min<std::size_t>(steps, tokens_.size())); }
  std::int64_t position() const { return static_cast<std::int64_t>(tokens_.size()); }

 private:
  Shape shape_;
  const Weights& weights_;
  std::int64_t max_tokens_;
  std::vector<int> tokens_;
  HostBuffer<float> x_, h_, q_, k_, v_, attended_;  // (max_tokens, d) except k_, v_: (max_tokens, kv_dim)
  HostBuffer<float> scores_;                        // (max_tokens)
};

// One query row against keys 0..n-1, the routine both fp32 paths share (and the CUDA kernel is checked against).
// q, out: (heads x head_dim); k, v: (n, kv_dim) row-major; scores: (n) scratch. Query head h reads KV head
// h / (heads / kv_heads).
void attention_row(const Shape& shape, const float* q, const float* k, const float* v, std::int64_t n, float* scores,
                   float* out);

// The next-token logits after `tokens` (positions 0..n-1), computed in double without BLAS: (vocab).
std::vector<double> reference_logits(const Shape& shape, const Weights& weights, const std::vector<int>& tokens);

// Index of the largest logit (the first on ties): greedy decoding.
int argmax(const float* logits, int count);

}  // namespace dlsys::decoder
