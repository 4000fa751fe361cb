#pragma once
// Where the CUDA stack (cuda/mlp_stack_cuda.h) keeps what its forward pass saves for backward, in one block of device
// memory, written in plain C++ so the offsets are tested without a GPU. With r rows, width w and a hidden layer e w
// wide, layer l's input comes first and its hidden layer right after, layer after layer, then the stack's output:
// input(l) starts at l (1 + e) r w floats and hidden(l) r w later. Given its first input elsewhere (a checkpoint the
// caller keeps), the block starts at hidden(0) and every offset is r w less: L (1 + e) r w floats in all, what
// Activations holds with first_input on the CPU.
//
// With e = 1 these are the (r, w) blocks the data-parallel and ZeRO trainers were written against: input(l) at block
// 2l, hidden(l) at 2l + 1, the output at 2L, and 2L + 1 blocks in all.
//
// Backward's scratch: dL/dy (r, w), dL/dz (r, e w) and dL/dx (r, w), one after the other (3 r w floats when e = 1).
#include <cstdint>

#include "kernels/training/mlp_stack.h"

namespace dlsys::training {

struct StackLayout {
  StackShape shape;
  int rows = 0;
  bool first_input_outside = false;

  std::int64_t boundary_floats() const { return std::int64_t(rows) * shape.width; }  // one (r, w) input or output
  std::int64_t hidden_floats() const { return std::int64_t(rows) * shape.inner(); }  // one (r, e w) hidden layer
  std::int64_t layer_floats() const { return boundary_floats() + hidden_floats(); }
  // Layer `layer`'s input; input_offset(layers) is the stack's output. Not for layer 0 when the first input is
  // outside.
  std::int64_t input_offset(int layer) const { return layer * layer_floats() - skipped(); }
  std::int64_t hidden_offset(int layer) const { return layer * layer_floats() + boundary_floats() - skipped(); }
  std::int64_t floats() const { return shape.layers * layer_floats() + boundary_floats() - skipped(); }

  std::int64_t scratch_dz_offset() const { return boundary_floats(); }
  std::int64_t scratch_dx_offset() const { return boundary_floats() + hidden_floats(); }
  std::int64_t scratch_floats() const { return 2 * boundary_floats() + hidden_floats(); }

 private:
  std::int64_t skipped() const { return first_input_outside ? boundary_floats() : 0; }
};

}  // namespace dlsys::training
