#pragma once
// A row-major product on column-major cuBLAS, for .cu files whose matrices are laid out as the CPU's.
#include <cublas_v2.h>

#include <cstdint>

#include "kernels/common/cuda/cuda_check.h"

namespace dlsys::cuda {

// c (m, n) = alpha a (m, inner) b (inner, n) + beta c, all row-major: cuBLAS reads each row-major matrix as its
// transpose, so it computes c^T = b^T a^T.
inline void row_major_sgemm(cublasHandle_t blas, const float* a, const float* b, float* c, std::int64_t m,
                            std::int64_t n, std::int64_t inner, float alpha, float beta) {
  DLSYS_CUDA_CHECK(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, int(n), int(m), int(inner), &alpha, b, int(n), a,
                               int(inner), &beta, c, int(n)));
}

}  // namespace dlsys::cuda
