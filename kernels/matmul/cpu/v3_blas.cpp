// v3_blas: OpenBLAS sgemm with the same thread count as the other variants, so the comparison is like for like.
#include <cblas.h>

#include "engine/address_space.h"
#include "kernels/matmul/matmul.h"

namespace dlsys::matmul {

void v3_blas(const Shape& s, const float* a, const float* b, float* c, int threads) {
  set_openblas_threads(threads);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(s.m), int(s.n), int(s.k), 1.0f, a, int(s.k), b, int(s.n),
              0.0f, c, int(s.n));
}

}  // namespace dlsys::matmul
