#pragma once
// Activation memory of one transformer layer: the bytes kept from the forward pass for the backward pass.
//
// [EXT] Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models" (MLSys 2023), section 4,
// with 16-bit activations and 1-byte dropout masks (a heads, s sequence, b micro-batch, h hidden, t ranks):
//   no parallelism                 s b h (34 + 5 a s / h)
//   tensor parallelism             s b h (10 + 24 / t + 5 a s / (h t))
//   tensor + sequence parallelism  s b h (34 / t + 5 a s / (h t))
// 34 = 11 (attention: QKV input 2, Q and K 4, V 2, output-projection input 2, dropout mask 1) + 19 (MLP: input 2,
// GeLU input 8, GeLU output 8, dropout mask 1) + 4 (the two layer norms' inputs); 5 a s / h = softmax output 2,
// its dropout mask 1 and dropout output 2, per element of the a s^2 b attention scores. Tensor parallelism splits
// all of it but 10 s b h (the layer-norm inputs 4, the inputs of the first linear of each block 4, the two dropout
// masks after each block 2); sequence parallelism splits those 10 too.
//
// The lab's layer keeps exactly the same tensors, in fp32 (4 bytes, twice the paper's 2) with 1-byte masks:
//   replicated  18 s b h     (x 4, LN1 output 4, attention-dropout mask 1, x2 4, LN2 output 4, MLP-dropout mask 1)
//   split       48 s b h / t (Q, K, V 12, attention output 4, GeLU input 16, GeLU output 16)
//   scores       9 a s^2 b / t (softmax output 4, its mask 1, dropout output 4)
// so s b h (18 + 48 / t + 9 a s / (h t)), or s b h (66 / t + 9 a s / (h t)) with sequence parallelism; every term is
// a whole number of bytes when t divides a (and so h). The ledger's count of what the layer allocates as
// "activations" equals this to the byte.
#include <cstdint>

#include "kernels/tensor/layer_shape.h"

namespace dlsys::tensor {

enum class Parallelism { None, Tensor, TensorSequence };

struct ActivationBytes {
  std::int64_t replicated = 0;  // what every rank keeps whole (none with sequence parallelism)
  std::int64_t split = 0;       // split over the ranks: the per-rank share
  std::int64_t scores = 0;      // the a s^2 b part, per rank
  std::int64_t total() const { return replicated + split + scores; }
};

// Per rank, per layer, from the paper's formula (16-bit activations). t is ignored for Parallelism::None.
ActivationBytes korthikanti_bytes(const LayerShape& shape, Parallelism parallelism);
// Per rank, per layer, for the lab's fp32 layer with the shape's own t and sequence parallelism.
ActivationBytes lab_layer_bytes(const LayerShape& shape);

// What the backward pass has rebuilt instead of kept [EXT] (Korthikanti et al., section 5; Chen et al. 2016):
//   None       every layer keeps s b h (34 + 5 a s / h)
//   Selective  the attention's softmax, its dropout mask and dropout output (the 5 a s / h part, which costs few FLOP
//              to recompute) are rebuilt: every layer keeps s b h 34
//   Full       every layer keeps only its 16-bit input, 2 s b h, and one layer at a time is rebuilt whole during the
//              backward pass: L x 2 s b h + s b h (34 + 5 a s / h)
enum class Recompute { None, Selective, Full };
// Bytes of activations a model of `layers` such layers keeps, per rank, 16-bit: with the shape's t ranks of tensor
// parallelism (and its sequence parallelism) when t > 1, Korthikanti's formulas above; with full recompute each layer
// keeps its input 2 s b h (2 s b h / t with sequence parallelism). Embeddings, the output layer's logits and
// framework workspace are not counted. The one formula the ZeRO calculator, the checkpointing lesson and the
// parallelism planner use.
double model_activation_bytes(const LayerShape& shape, std::int64_t layers, Recompute recompute);

// The formula as printed, for reports: "s b h (10 + 24/t + 5 a s / (h t))".
const char* korthikanti_formula(Parallelism parallelism);

}  // namespace dlsys::tensor
