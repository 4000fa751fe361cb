#pragma once
// The shape of one transformer layer split over t tensor-parallel ranks (Megatron-LM's layout, Shoeybi et al. 2019),
// and the sizes each rank holds. Notation as in Korthikanti et al. (MLSys 2023): s sequence, b micro-batch, h hidden,
// a heads, t tensor-parallel ranks.
//
// Activations are (s, b, h) row-major: row i_s * b + i_b holds one token, so a block of whole sequence positions is a
// block of contiguous rows. That is what lets sequence parallelism hand rank r the rows of positions
// [r s / t, (r + 1) s / t) without copying.
#include <cstdint>

namespace dlsys::tensor {

struct LayerShape {
  std::int64_t batch = 1;   // b
  std::int64_t seq = 1;     // s
  std::int64_t hidden = 1;  // h
  std::int64_t heads = 1;   // a
  int ranks = 1;            // t
  bool sequence_parallel = false;

  std::int64_t tokens() const { return seq * batch; }               // rows of a full activation: s b
  std::int64_t head_dim() const { return hidden / heads; }          // d = h / a
  std::int64_t heads_per_rank() const { return heads / ranks; }     // a / t
  std::int64_t hidden_per_rank() const { return hidden / ranks; }   // h / t: one rank's heads, d columns each
  std::int64_t ffn_per_rank() const { return 4 * hidden / ranks; }  // 4h / t: one rank's columns of the MLP
  // Rows of the activations that tensor parallelism alone leaves replicated (layer-norm inputs and outputs, the
  // residual stream, dropout masks): all s b, or s b / t with sequence parallelism.
  std::int64_t local_tokens() const { return sequence_parallel ? tokens() / ranks : tokens(); }
  // The first row of rank r's sequence block (0 without sequence parallelism).
  std::int64_t first_local_token(int rank) const { return sequence_parallel ? rank * local_tokens() : 0; }
};

// Parameters per rank: W_qkv (h, 3h/t), W_o (h/t, h), W_1 (h, 4h/t), W_2 (4h/t, h): 12 h^2 / t, plus the two layer
// norms' gain and bias (4 h), which every rank keeps whole. The linears have no bias.
inline std::int64_t params_per_rank(const LayerShape& s) { return 12 * s.hidden * s.hidden / s.ranks + 4 * s.hidden; }

// What the layer requires of its shape; an empty string when it is fine, else which rule is broken.
const char* shape_problem(const LayerShape& s);

}  // namespace dlsys::tensor
