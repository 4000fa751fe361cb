#pragma once
// One training step of the residual MLP stack (mlp_stack.h) with activation checkpointing (Chen et al. 2016): the
// forward pass keeps only the input of every k-th layer (the segment boundaries) and the stack's output; the backward
// pass rebuilds each segment's activations from its boundary, last segment first, and backpropagates through it.
// Every activation the step keeps for its backward pass is counted in the memory ledger under kActivationTag (the
// forward's one-layer working buffers under kWorkspaceTag), so the ledger's peak is the lesson's measurement.
//
// With r rows, width w and a hidden layer e w wide, a boundary is r w floats and a layer's kept activations (its input
// and hidden layer) r w (1 + e). The peaks, in floats:
//   keep everything     r w (L (1 + e) + 1)      every layer's input and hidden, and the output
//   checkpoint every k  r w (L / k + (1 + e) k)  the L / k boundaries, and while the last segment is rebuilt its k
//                                                 hidden layers and k outputs (its first input is its boundary)
// Rebuilding is the same forward on the same inputs, so the gradients equal those kept whole bit for bit.
#include <cstdint>

#include "engine/ledger.h"
#include "kernels/training/mlp_stack.h"

namespace dlsys::training {

inline constexpr const char* kActivationTag = "activations";
inline constexpr const char* kWorkspaceTag = "workspace";

// Keep every layer's activations: no recompute.
inline constexpr int kKeepEverything = 0;

// The peak of kActivationTag during a step, in bytes, as the header's closed forms say. segment_layers = 0 keeps
// everything; else it must divide shape.layers.
std::int64_t step_activation_peak_bytes(const StackShape& shape, int rows, int segment_layers);

// One step over `rows` rows: sets `gradients` (parameter_count(shape) floats) to the loss's gradient and returns the
// loss 0.5 x sum((y - t)^2) / rows. segment_layers = kKeepEverything runs the plain forward and backward; k >= 1
// (dividing shape.layers) checkpoints every k layers.
double train_step(const StackShape& shape, const float* weights, const float* inputs, const float* targets, int rows,
                  int segment_layers, MemoryLedger& ledger, float* gradients);

}  // namespace dlsys::training
