#pragma once
// The CUDA variants, callable from code that never includes a CUDA header. Without CUDA in the
// build, a stub (cuda/*_none.cpp) throws RunFailure instead.
//   v1_naive      - one thread per c_ij, reading A and B straight from global memory.
//   v2_smem_tiled - square tiles of A and B staged in shared memory, so each global load is reused TILE times.
//   v3_cublas     - cublasSgemm.
#include "engine/measure.h"
#include "kernels/matmul/tile_math.h"

namespace dlsys::matmul::cuda {

enum class Variant { Naive, SmemTiled, Cublas };

// v2_smem_tiled's tiles of A, B and C: kSmemTile x kSmemTile, one thread per element of C.
inline constexpr int kSmemTile = 32;

// Copies a and b to device 0, runs `variant` (options.warmup untimed, then options.repeats timed with CUDA events),
// copies the last C back into c. Throws RunFailure with the CUDA or cuBLAS error when anything fails
// (e.g. out of device memory); device memory is freed on every path.
TimingStats run(Variant variant, const Shape& shape, const float* a, const float* b, float* c,
                const MeasureOptions& options);

}  // namespace dlsys::matmul::cuda
