#pragma once
// The model the mesh trains, how it is cut over the mesh, and the closed forms of what each rank holds and sends.
//
// The model is the lab's residual MLP stack (kernels/training/mlp_stack.h: L blocks y = x + relu(x W1) W2, W1 (h, e h),
// W2 (e h, h), a squared-error loss), as a transformer's MLP sublayers are:
//   pipeline  stage p holds layers [p L / pp, (p + 1) L / pp);
//   tensor    rank t holds columns [t f / tp, (t + 1) f / tp) of each W1 and the same rows of each W2 (f = e h):
//             Megatron-LM's MLP, one all-reduce of the (rows, h) output forward and one of the input gradient backward;
//   data      replica d trains rows [d B / dp, (d + 1) B / dp) of the batch, cut into m micro-batches that the
//             pipeline runs 1F1B; each layer's gradient shard is all-reduced over the dp group (one bucket a layer).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/mesh/mesh_shape.h"
#include "kernels/training/mlp_stack.h"

namespace dlsys::mesh {

struct MeshModel {
  MeshShape mesh;
  int layers = 4;     // L
  int hidden = 64;    // h
  int expansion = 4;  // e: the block's middle is e h wide, as a transformer's MLP (4h)
  int batch = 32;     // B: rows per optimizer step, every replica together
  int micro_batches = 2;

  training::StackShape stack() const { return {.layers = layers, .width = hidden, .expansion = expansion}; }
  int inner() const { return expansion * hidden; }                                                   // f
  int inner_per_rank() const { return inner() / mesh.tp; }                                           // f / tp
  int layers_per_stage() const { return layers / mesh.pp; }                                          // L / pp
  int rows_per_micro_batch() const { return batch / (mesh.dp * micro_batches); }                     // B / (dp m)
  std::int64_t layer_shard_elements() const { return 2 * std::int64_t(hidden) * inner_per_rank(); }  // W1 | W2 shard
  std::int64_t shard_elements() const { return layers_per_stage() * layer_shard_elements(); }
  // The largest operand or result of a rank's block product (kernels/pipeline/mlp_block.h): a micro-batch's (rows, h)
  // or (rows, f / tp), or a weight shard's (h, f / tp).
  std::int64_t largest_product_elements() const {
    const std::int64_t rows = rows_per_micro_batch(), h = hidden, f = inner_per_rank();
    return std::max({rows * h, rows * f, h * f});
  }
};

// Which parameter breaks the model's rules and how, or "" when it can be cut over its mesh.
std::string model_problem(const MeshModel& model);

// Rank `c`'s shard of a full weight vector (the stack's flat layout), layer after layer, each [W1 shard | W2 shard]:
// W1 shard (h, f / tp) row-major, W2 shard (f / tp, h).
std::vector<float> shard_of(const MeshModel& model, const MeshCoord& c, const std::vector<float>& full);
// Writes a shard back into its place in `full`.
void place_shard(const MeshModel& model, const MeshCoord& c, const float* shard, std::vector<float>& full);

// Closed forms per rank and per optimizer step.
struct RankCosts {
  // Bytes sent (fp32): each all-reduce of n floats on a ring of k ranks sends 2 (k - 1) / k n 4 B.
  int tp_all_reduces = 0;     // 2 per layer of the stage per micro-batch (forward output, input gradient)
  std::int64_t tp_bytes = 0;  // tp_all_reduces x 2 (tp - 1) / tp x rows h 4
  int dp_buckets = 0;         // one a layer of the stage
  std::int64_t dp_bytes = 0;  // 2 (dp - 1) / dp x the rank's gradient shard bytes (exact ring chunks)
  int pp_messages = 0;        // m activations to the next stage, m gradients to the previous one
  std::int64_t pp_bytes = 0;  // pp_messages x rows h 4
  // Memory (fp32, SGD: no optimizer state).
  std::int64_t weight_bytes = 0;      // the shard: L / pp layers of 2 h f / tp
  std::int64_t gradient_bytes = 0;    // as many
  int micro_batches_in_flight = 0;    // 1F1B: min(pp - p, m) on stage p
  std::int64_t stash_bytes = 0;       // one micro-batch: each layer's input (rows, h) and hidden (rows, f / tp), and on
                                      // the last stage its output (for the loss)
  std::int64_t activation_bytes = 0;  // in flight x stash
  std::int64_t scratch_bytes = 0;     // the backward's dy, dx (rows, h) and dz (rows, f / tp)
};
RankCosts rank_costs(const MeshModel& model, const MeshCoord& c);

}  // namespace dlsys::mesh
