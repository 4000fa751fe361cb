#pragma once
// Matrix multiplication C = A B in fp32, row-major:
//   a: (m, k), b: (k, n), c: (m, n).
// The variants teach one idea each:
//   reference   - double accumulation: the oracle every variant is checked against.
//   v1_naive    - the textbook ijk triple loop; O(mnk) work, but B is walked down columns (no reuse, cache misses).
//   v2_tiled    - cache blocking with packed panels and a register-blocked, vectorisable inner kernel, threaded.
//   v3_blas     - OpenBLAS sgemm: the same O(mnk) work, a far better constant.
#include <cstdint>

#include "kernels/matmul/tile_math.h"

namespace dlsys::matmul {

// Reference: c[i][j] = sum_l a[i][l] * b[l][j], accumulated in double.
void reference(const Shape& shape, const float* a, const float* b, double* c);
void v1_naive(const Shape& shape, const float* a, const float* b, float* c, int threads);
void v2_tiled(const Shape& shape, const float* a, const float* b, float* c, int threads);
void v3_blas(const Shape& shape, const float* a, const float* b, float* c, int threads);

// Largest |c - ref| / (sum_l |a_il| |b_lj|) over all elements: the error relative to the size of the terms summed,
// which fp32 keeps below about k * 2^-24 whatever the signs.
double max_relative_error(const Shape& shape, const float* a, const float* b, const float* c, const double* ref);
// The same measure on a fixed sample of `samples` entries (each a k-long dot product in double), for products too
// large for the full reference: the four corners of C (where edge tiles end) and pseudo-random (i, j) pairs drawn
// from `seed`. Also returns INFINITY when a sampled entry is NaN (an unwritten, poisoned output).
double sampled_max_relative_error(const Shape& shape, const float* a, const float* b, const float* c, int samples,
                                  unsigned seed = 1);
// Whether the full reference is too slow for one thread (m n k >= 2048^3: minutes at 4096^3), so a check samples.
bool reference_is_sampled(const Shape& shape);
inline constexpr int kReferenceSamples = 256;
// The bound a correct fp32 kernel stays under: a small multiple of k * unit roundoff (scaled by k, since the rounding
// errors of k terms add up).
double error_tolerance(const Shape& shape);

}  // namespace dlsys::matmul
