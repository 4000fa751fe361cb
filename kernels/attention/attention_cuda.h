#pragma once
// The CUDA variants, callable from code that never includes a CUDA header. Without CUDA in the
// build, a stub (cuda/*_none.cpp) throws RunFailure instead.
//   v1_naive - S = scale Q K^T written to global memory (cuBLAS), a softmax kernel rewrites it into P in place
//              (masking future keys), then O = P V (cuBLAS): n^2 floats of device scratch.
//   v2_flash - FlashAttention-2 order: one thread block per Q block of br rows; K and V stream through shared memory
//              in blocks of bc rows; S, m, l and the output accumulator never leave the block. No n^2 scratch.
#include <cstdint>

#include "engine/measure.h"
#include "kernels/attention/tile_math.h"

namespace dlsys::attention::cuda {

enum class Variant { Naive, Flash };

struct RunStats {
  TimingStats timing;
  std::int64_t device_scratch_bytes = 0;  // global memory beyond q, k, v, o (naive: S)
  std::int64_t shared_bytes_per_block = 0;
};

// Copies q, k, v (n, d) to device 0, runs `variant` (options.warmup untimed, then options.repeats timed with CUDA
// events), copies the last O back into o. `tiling` is used by v2_flash only. Throws BadInput when the tiles need
// more shared memory than the device allows a block, RunFailure on any CUDA or cuBLAS error (device memory is freed
// on every path).
RunStats run(Variant variant, const Problem& problem, const Tiling& tiling, const float* q, const float* k,
             const float* v, float* o, const MeasureOptions& options);

}  // namespace dlsys::attention::cuda
