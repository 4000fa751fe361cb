#pragma once
// How the files of cuda/ reach each other's kernels: one host function per family, launching on the default
// stream. Each checks the launch (cudaGetLastError) and throws RunFailure on error.
#include <cuda_bf16.h>

#include "kernels/matmul/ladder.h"

namespace dlsys::matmul::cuda::detail {

// Naive, Coalesced, SmemTiled, Blocktile1d, Blocktile2d, Vectorized (simt_kernels.cu).
void launch_simt(Rung rung, const Shape& shape, const float* a, const float* b, float* c);
// kWarpTiles[config] (warptile.cu).
void launch_warptile(int config, const Shape& shape, const float* a, const float* b, float* c);
// Tensor cores (tensor_core_kernels.cu): tf32 from fp32 operands, bf16 from operands already rounded to bf16.
void launch_tf32_mma(const Shape& shape, const float* a, const float* b, float* c);
void launch_bf16_mma(const Shape& shape, const __nv_bfloat16* a, const __nv_bfloat16* b, float* c);

}  // namespace dlsys::matmul::cuda::detail
