#pragma once
// One rank's part of a transformer layer under Megatron-LM tensor parallelism (Shoeybi et al. 2019), forward and
// backward, no fused tricks. Pre-norm GPT layer, row-major (s b, h) activations:
//
//   u  = LN1(x)                                      replicated (or this rank's sequence block, with SP)
//   q, k, v = u W_qkv        column-parallel: this rank's a/t heads, W_qkv shard (h, 3h/t)
//   P  = causal softmax(q k^T / sqrt(d)),  Pd = dropout(P),  o = Pd v       per head, on this rank only
//   A  = o W_o               row-parallel: W_o shard (h/t, h) gives a partial sum; all-reduce (g)
//   x2 = x + dropout(A)
//   u2 = LN2(x2);  z = u2 W_1 (column-parallel, (h, 4h/t));  G = GeLU(z)    GeLU on this rank's columns alone
//   Y  = G W_2               row-parallel ((4h/t, h)); all-reduce (g)
//   out = x2 + dropout(Y)
//
// Backward: the mirror image; the gradients of u and u2 are partial sums over the ranks (each rank's shard
// contributes) and take one all-reduce each (f's backward). Weight-gradient shards need no communication: each rank's
// dW is already complete for the columns or rows it owns.
//
// With sequence parallelism (Korthikanti et al. 2023) rank r keeps only its block of sequence positions of everything
// outside the two blocks: each all-reduce becomes a reduce-scatter (forward: the block's rows of the sum) and an
// all-gather (before the column-parallel linear). The input of each column-parallel linear is kept only as this
// rank's block, as the paper does, so the backward all-gathers it once more for the weight gradient; and the layer
// norms' gain and bias gradients, now partial sums over the blocks, take one small all-reduce (4h floats). The paper
// names the pair at a block's input g (all-gather forward, reduce-scatter backward) and at its output g-bar
// (reduce-scatter forward, all-gather backward); without SP, Megatron-LM's f (identity forward, all-reduce backward)
// and g (all-reduce forward, identity backward).
//
// T is float for the ranks and double for the unsharded reference (one rank, no communication).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/host_buffer.h"
#include "kernels/tensor/layer_shape.h"
#include "kernels/tensor/step_times.h"
#include "kernels/tensor/tp_group.h"

namespace dlsys::tensor {

// Elements of every buffer one rank allocates, by ledger tag, from the shape alone (for memory checks before any
// allocation). Values are T; dropout masks one byte each.
struct RankBufferCounts {
  std::int64_t weight_values = 0;      // and as many gradient values
  std::int64_t activation_values = 0;  // kept for the backward pass
  std::int64_t activation_mask_bytes = 0;
  std::int64_t scratch_values = 0;  // transient buffers, the input gradient, the output
  std::int64_t bytes(std::int64_t value_bytes) const {
    return (2 * weight_values + activation_values + scratch_values) * value_bytes + activation_mask_bytes;
  }
};
RankBufferCounts rank_buffer_counts(const LayerShape& shape);

// The layer's trainable tensors, for tests that perturb one (finite differences).
enum class Parameter { Wqkv, Wo, W1, W2, Norms };

template <typename T>
class RankLayer {
 public:
  // Allocates this rank's weights (its shards, filled from their global indices), activations and scratch in `ledger`
  // under "<kind><tag_suffix>" ("weights rank 0", "activations rank 0", ...), and its input and output gradient.
  // `group` is nullptr for one rank.
  RankLayer(const LayerShape& shape, int rank, MemoryLedger& ledger, const std::string& tag_suffix, TpGroup* group);

  // Forward then backward; for several ranks, called on every rank's thread at once (TpGroup::run).
  RankStepTimes step();

  const LayerShape& shape() const { return shape_; }
  int rank() const { return rank_; }
  // This rank's rows of the output and of the input gradient: all s b rows, or its sequence block with SP.
  const T* output() const { return out_.data(); }
  const T* input_gradient() const { return dx_.data(); }
  // Weight-gradient shards, laid out as the weight shards: dW_qkv (h, 3h/t) as [Q | K | V] columns of this rank's
  // heads, dW_o (h/t, h), dW_1 (h, 4h/t), dW_2 (4h/t, h); norms (4h) = [gain1 | bias1 | gain2 | bias2].
  const T* grad_wqkv() const { return dwqkv_.data(); }
  const T* grad_wo() const { return dwo_.data(); }
  const T* grad_w1() const { return dw1_.data(); }
  const T* grad_w2() const { return dw2_.data(); }
  const T* grad_norms() const { return dnorms_.data(); }
  // This rank's shard of a parameter, and its rows of the input x, writable (tests perturb them).
  std::span<T> parameter(Parameter which);
  std::span<T> input() { return x_.span(); }

 private:
  void fill_inputs_and_weights();
  void forward(RankStepTimes& times);
  void backward(RankStepTimes& times);
  void attention_forward();
  void attention_backward();
  // A collective on this rank's buffer (nothing with one rank), recorded and timed.
  void collective(RankStepTimes& times, collectives::Op op, const char* site, bool backward, T* buffer,
                  std::int64_t count);
  // The full (s b, h) input of a column-parallel linear: `local` itself, or with SP, `local` placed at this rank's
  // block of `full` and all-gathered.
  const T* gather_rows(RankStepTimes& times, const char* site, bool backward, const T* local, T* full);

  LayerShape shape_;
  int rank_;
  TpGroup* group_;
  // Weights (tag "weights") and their gradients ("gradients").
  HostBuffer<T> wqkv_, wo_, w1_, w2_, norms_;
  HostBuffer<T> dwqkv_, dwo_, dw1_, dw2_, dnorms_;
  // Kept from forward for backward ("activations"): what the activation formula counts, nothing else.
  HostBuffer<T> x_, u_, qkv_, probs_, probs_dropped_, attn_out_, x2_, u2_, z_, gelu_out_;
  HostBuffer<std::uint8_t> attn_mask_, attn_out_mask_, mlp_out_mask_;
  // Transient ("scratch"): full-size gather and partial-sum buffers, gradients on the way, output and input gradient.
  HostBuffer<T> full_a_, full_b_, wide_, dqkv_, dattn_out_, square_, dx2_, dout_, dx_, out_;
};

extern template class RankLayer<float>;
extern template class RankLayer<double>;

}  // namespace dlsys::tensor
