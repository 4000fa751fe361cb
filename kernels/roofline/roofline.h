#pragma once
// The kernels the roofline lesson measures a machine with and places on its roof, fp32, threaded over contiguous
// ranges on the worker pool. Each teaches one thing:
//   stream_*       McCalpin's STREAM copy, scale, add and triad on arrays far larger than the caches: the bandwidth
//                  ceiling. Scale with s = 2 is the course's y = 2x.
//   fma_peak       independent chains of fused multiply-adds held in vector registers, no memory traffic at all: the
//                  compute ceiling (several chains per thread, because one FMA waits for the previous one in its
//                  chain).
//   fma_family     the same multiply-adds applied k times to each element streamed through: k sets the intensity,
//                  k / 4 FLOP per byte, so a sweep of k walks along the roof.
//   softmax_rows   a row softmax: little arithmetic per byte, memory-bound on any machine.
//   gemv_bf16      decode's matrix-vector product with 16-bit weights: each weight is used once, about 1 FLOP per byte.
//   scale_on_pool  y = 2x handed to the worker pool even for one element: the cost of dispatch, as a launch is on a
//   GPU.
// Every kernel has a double-precision reference the tests check it against.
#include <cstdint>
#include <span>

#include "kernels/common/stores.h"

namespace dlsys::roofline {

void stream_copy(float* c, const float* a, std::int64_t n, int threads, Stores stores);
void stream_scale(float* b, const float* c, float s, std::int64_t n, int threads, Stores stores);
void stream_add(float* c, const float* a, const float* b, std::int64_t n, int threads, Stores stores);
void stream_triad(float* a, const float* b, const float* c, float s, std::int64_t n, int threads, Stores stores);

// Runs `iterations` steps of the peak kernel on `threads` threads; returns a checksum of the registers (so the
// compiler keeps the work). fma_peak_flop says how many FLOP that was.
double fma_peak(int threads, std::int64_t iterations);
double fma_peak_flop(int threads, std::int64_t iterations);
// fp32 lanes of the vectors the CPU kernels were compiled for (16 with AVX-512, 8 with AVX2), and independent
// multiply-add chains each thread of fma_peak keeps in flight.
int vector_lanes();
int fma_peak_chains();

// y_i = f_k(x_i): k multiply-adds v <- kFamilyA v + kFamilyC starting from v = x_i.
void fma_family(float* y, const float* x, std::int64_t n, std::int64_t k, int threads, Stores stores);
// The same in double, for one element.
double fma_family_reference(float x, std::int64_t k);

// y: (rows, cols) = softmax of each row of x: (rows, cols).
void softmax_rows(float* y, const float* x, std::int64_t rows, std::int64_t cols, int threads, Stores stores);
void softmax_rows_reference(double* y, const float* x, std::int64_t rows, std::int64_t cols);

// y: (rows) = W x with W: (rows, cols) row-major in bfloat16 bits, x: (cols).
void gemv_bf16(float* y, const std::uint16_t* w, const float* x, std::int64_t rows, std::int64_t cols, int threads);
void gemv_bf16_reference(double* y, const std::uint16_t* w, const float* x, std::int64_t rows, std::int64_t cols);

// bfloat16: the top 16 bits of an fp32 (round to nearest, ties to even), and back.
inline std::uint16_t to_bf16(float value) {
  std::uint32_t bits;
  __builtin_memcpy(&bits, &value, sizeof bits);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>(bits >> 16);
}
inline float from_bf16(std::uint16_t half) {
  const std::uint32_t bits = std::uint32_t(half) << 16;
  float value;
  __builtin_memcpy(&value, &bits, sizeof value);
  return value;
}

// y = 2x on n elements, cut into `threads` ranges that always go through the worker pool (even when n is 1), so a
// call costs at least one hand-over to the pool and back.
void scale_on_pool(float* y, const float* x, std::int64_t n, int threads);

}  // namespace dlsys::roofline
