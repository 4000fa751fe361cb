#pragma once
// Data-parallel training of the residual MLP stack (kernels/training) with mixed-precision Adam at ZeRO's stages
// 0-3, on N CPU rank threads that talk only through the lab's ring collectives.
//
// Every rank keeps, as real storage recorded in its own memory ledger:
//   "weights"    the 16-bit working copy (2-byte values, bf16 or fp16): all of it, or at stage 3 its shard;
//   "gradients"  16-bit gradients: all of them at stages 0-1, its shard at stages 2-3;
//   "optimizer"  fp32 master weights and Adam's two moments (K = 12 bytes a parameter): all at stage 0, else a shard;
//   "activations" what forward keeps for backward, and the backward's own row buffers;
//   "comm"       what travels: a layer's gradient bucket (fp32 carrier of 16-bit values), and at stage 3 the layer of
//                weights just all-gathered (freed as soon as its forward or backward is done);
//   "workspace"  one layer's weights widened to fp32 for the GEMMs (stages 0-2) and one layer's fp32 gradient as the
//                GEMM writes it, before it is rounded to 16 bits.
// The ledger's weights + gradients + optimizer equal the ZeRO paper's formulas to the byte (zero_memory.h).
//
// Shards follow the ring: each layer's 2 w^2 weights are cut into N chunks and rank r owns chunk (r + 1) mod N of
// every layer (ring_schedule.h: what a reduce-scatter leaves it), so a rank's shard is one chunk of each layer, as in
// FSDP's flat parameters. The collectives carry fp32 (the lab's ring sums fp32): 16-bit values widen exactly, so the
// sums are what an fp32-accumulating reduction of 16-bit gradients gives; on a real wire they would take half the
// bytes.
//
// Why the final weights equal stage 0's bit for bit: stage 0's all-reduce is the ring's reduce-scatter followed by its
// all-gather, so every gradient element is summed in the same order at every stage; Adam is elementwise, the same code
// on the same values wherever the element lives; and the all-gathers only copy.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/training/mlp_stack.h"
#include "kernels/zero/zero_types.h"

namespace dlsys::zero {

// Whether the stack can be sharded evenly: every layer's 2 w^2 weights divisible by N (then so is Psi).
bool shards_evenly(const training::StackShape& shape, int ranks);

// Trains `config.steps` steps and returns what the ranks measured. Throws std::invalid_argument when the stack does not
// shard evenly or the stage is outside 0-3.
ZeroTraining train_sharded(const ZeroConfig& config);

// Bytes the run allocates at most, all ranks together (for refusing sizes before allocating): an upper bound.
double training_bytes_bound(const ZeroConfig& config);

}  // namespace dlsys::zero
