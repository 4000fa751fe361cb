#pragma once
// The serving model's shape and sizes, apart from its buffers, so device code (compiled as C++17) can include it.
#include <cstdint>

#include "kernels/decoder/shape.h"

namespace dlsys::serving {

struct ModelShape {
  int d_model = 128;
  int layers = 4;
  int heads = 4;
  int mlp_dim = 512;  // the MLP's hidden width (4 d_model)
  int vocab = 256;
  int context = 512;  // positions the model has embeddings for: prompt + generated tokens at most
  decoder::Shape attention() const { return {d_model, layers, heads, heads, vocab}; }
  int head_dim() const { return d_model / heads; }
};

// Throws BadInput naming the field when the shape cannot be built.
void check_shape(const ModelShape& shape);

// fp32 parameters of the whole stack (embeddings, every layer, the output head).
std::int64_t parameter_count(const ModelShape& shape);
// Parameters one token's pass multiplies by (every layer's projections and the output head): 2 FLOP each.
std::int64_t matmul_parameters(const ModelShape& shape, int layers);
// K and V of one token, every layer, fp32: 2 x layers x d_model x 4 (the kvcache lesson's formula, 4-byte elements).
std::int64_t kv_bytes_per_token(const ModelShape& shape, int layers);

// The weights' host arrays in the layout of model.h's Weights, without owning them.
struct WeightPointers {
  const float *embedding, *position, *wq, *wk, *wv, *wo, *w_up, *w_down, *unembedding;
};

}  // namespace dlsys::serving
