// v1_naive: the textbook ijk loop. For each c_ij it walks row i of A (contiguous) and column j of B (stride n),
// so every step down B's column touches a new cache line: the loop waits on memory, not on arithmetic.
// Rows of C are split across threads so that "naive" differs from the others only in how it uses memory.
#include "engine/parallel.h"
#include "kernels/matmul/matmul.h"

namespace dlsys::matmul {

void v1_naive(const Shape& s, const float* a, const float* b, float* c, int threads) {
  parallel_for(s.m, threads, [&](std::int64_t row_begin, std::int64_t row_end) {
    for (std::int64_t i = row_begin; i < row_end; ++i)
      for (std::int64_t j = 0; j < s.n; ++j) {
        float sum = 0.0f;
        for (std::int64_t l = 0; l < s.k; ++l) sum += a[i * s.k + l] * b[l * s.n + j];
        c[i * s.n + j] = sum;
      }
  });
}

}  // namespace dlsys::matmul
