#pragma once
// A row-major product on column-major cuBLAS, for .cu files whose matrices are laid out as the CPU's.
#include <cublas_v2.h>

#include <cstdint>

#include "kernels/common/cuda/cuda_check.h"

namespace dlsys::cuda {

// c (m, n) = alpha op(a) op(b) + beta c, all row-major and packed: op(a) (m, inner) is a, stored (m, inner), or with
// trans_a the transpose of a stored (inner, m); op(b) (inner, n) likewise. cuBLAS reads each row-major matrix as its
// transpose, so it computes c^T = op(b)^T op(a)^T, with the same transpose flags on the stored matrices.
inline void row_major_sgemm(cublasHandle_t blas, bool trans_a, bool trans_b, const float* a, const float* b, float* c,
                            std::int64_t m, std::int64_t n, std::int64_t inner, float alpha, float beta) {
  DLSYS_CUDA_CHECK(cublasSgemm(blas, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, int(n),
                               int(m), int(inner), &alpha, b, int(trans_b ? inner : n), a, int(trans_a ? m : inner),
                               &beta, c, int(n)));
}

// c (m, n) = alpha a (m, inner) b (inner, n) + beta c, all row-major.
inline void row_major_sgemm(cublasHandle_t blas, const float* a, const float* b, float* c, std::int64_t m,
                            std::int64_t n, std::int64_t inner, float alpha, float beta) {
  row_major_sgemm(blas, false, false, a, b, c, m, n, inner, alpha, beta);
}

}  // namespace dlsys::cuda
