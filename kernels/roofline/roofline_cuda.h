#pragma once
// The roofline lesson's kernels on a GPU (see roofline.h for what each teaches), on device pointers
// (kernels/common/device_buffer.h), launched on the default stream and returning at once; plus the costs of launching.
// Without CUDA in the build each throws RunFailure saying why.
#include <cstdint>

namespace dlsys::roofline::cuda {

void stream_copy(float* c, const float* a, std::int64_t n);
void stream_scale(float* b, const float* c, float s, std::int64_t n);
void stream_add(float* c, const float* a, const float* b, std::int64_t n);
void stream_triad(float* a, const float* b, const float* c, float s, std::int64_t n);

// Independent FMA chains held in registers on every SM: fma_peak_blocks() blocks, each thread running
// fma_peak_chains() chains of `iterations` steps and writing one float to `sink` (fma_peak_threads() floats), so the
// compiler keeps the work.
int fma_peak_blocks();
int fma_peak_chains();
std::int64_t fma_peak_threads();
void fma_peak(float* sink, std::int64_t iterations);
double fma_peak_flop(std::int64_t iterations);

// y_i = f_k(x_i): k multiply-adds v <- kFamilyA v + kFamilyC from v = x_i (roofline_math.h).
void fma_family(float* y, const float* x, std::int64_t n, std::int64_t k);
// y = softmax of each row of x: (rows, cols), one block per row.
void softmax_rows(float* y, const float* x, std::int64_t rows, std::int64_t cols);
// y: (rows) = W x with W: (rows, cols) row-major in bfloat16 bits, one warp per row.
void gemv_bf16(float* y, const std::uint16_t* w, const float* x, std::int64_t rows, std::int64_t cols);

// What a call costs beyond its work, per kernel:
//   launched       `calls` kernels y = 2x on n elements launched back to back, timed by events around them all;
//   graph          the same calls captured once in a CUDA Graph and replayed, timed the same way;
//   launch_wait    (host clock) an empty kernel launched and waited for, one after the other: the round trip a
//                  framework that synchronises after every operation pays.
struct CallCosts {
  double launched_us = 0, graph_us = 0;
};
CallCosts scale_call_costs(float* y, const float* x, std::int64_t n, int calls);
double empty_launch_and_wait_us(int calls);

}  // namespace dlsys::roofline::cuda
