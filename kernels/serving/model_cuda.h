#pragma once
// The serving model on GPU 0, behind the scheduler's interface (backend.h), callable from code that never includes a
// CUDA header. Without the CUDA library, make_model (cuda/model_cuda_calls.cpp) throws RunFailure saying why.
//
// The weights are copied from the CPU model's (the same seeded values); each slot's K and V live in device memory
// for the whole context. A prefill runs every projection as one cuBLAS sgemm over the prompt's rows. Every other
// pass (a decode step over the sequences in flight, the k + 1 rows a speculative step verifies) runs its projections
// through the lab's own row kernel: one thread per output element sums its terms in a fixed order, so one row's
// logits, and so its greedy token, never depend on which other rows share the pass (cuBLAS may pick a different
// algorithm, and so a different summation order, for each batch size). Layer norm (RMS), attention over each row's
// own cache length, ReLU, the residual adds and the greedy argmax are small kernels of their own. Every pass ends by
// copying its tokens to the host, which waits for the device, as a server must before it returns a token.
#include <memory>

#include "kernels/serving/backend.h"

namespace dlsys::serving::cuda {

// The first `layers` layers of `weights` (host arrays in model.h's layout: pointers(weights)) on GPU 0 with `slots`
// caches and scratch for `max_rows` rows (at least the context). Throws RunFailure on any CUDA or cuBLAS error; device
// memory is freed on every path.
std::unique_ptr<ModelBackend> make_model(const ModelShape& shape, const WeightPointers& weights, int layers, int slots,
                                         int max_rows);

}  // namespace dlsys::serving::cuda
