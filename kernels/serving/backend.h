#pragma once
// What the scheduler and speculative decoding need of a model, whichever device runs it: a fixed number of slots
// (one KV cache each), a prefill of one prompt into a slot, and one pass over any rows of any slots. The CPU model
// (model.h) and the GPU model (model_cuda.h) both implement it, so static, adaptive and continuous batching run the
// same scheduler code on either. Every call returns with its tokens on the host: a server cannot hand back a token
// before the device has finished computing it.
#include <cstdint>
#include <vector>

#include "kernels/serving/shape.h"

namespace dlsys::serving {

// One row of a pass: the token fed at `position` of the sequence in `slot` (position <= that slot's length).
struct SlotRow {
  int slot = 0;
  int token = 0;
  std::int64_t position = 0;
};

class ModelBackend {
 public:
  virtual ~ModelBackend() = default;
  virtual const ModelShape& shape() const = 0;
  virtual int layers() const = 0;
  virtual int slots() const = 0;
  virtual int max_rows() const = 0;
  // Tokens held in a slot's cache; setting it shorter forgets the positions past it (they are overwritten later).
  virtual std::int64_t length(int slot) const = 0;
  virtual void set_length(int slot, std::int64_t length) = 0;
  // The prompt through the model into `slot` (its length becomes the prompt's): the greedy first generated token.
  virtual int prefill(int slot, const std::vector<int>& prompt) = 0;
  // The rows through the model; each row's greedy next token in `next`. A slot's length becomes
  // max(length, position + 1). One row's token never depends on the other rows in the pass.
  virtual void forward(const std::vector<SlotRow>& rows, std::vector<int>& next) = 0;
  // The last pass's logits of `row` (a prefill's first generated token: row 0), copied to the host.
  virtual std::vector<float> logits(int row) = 0;
  // "cpu" or "cuda", for notes.
  virtual const char* device() const = 0;
};

// Device bytes the GPU model takes: its layers' weights (with the shared embeddings and head), K and V of every
// layer for `slots` sequences at the whole context, and the scratch for `max_rows` rows (at least the context, the
// longest prefill) with every head's attention scores, all fp32.
std::int64_t cuda_model_bytes(const ModelShape& shape, int layers, int slots, int max_rows);

}  // namespace dlsys::serving
