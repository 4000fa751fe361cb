#pragma once
// Pointwise kernels, unfused and fused, fp32, threaded over contiguous ranges on the worker pool. Each pass streams
// its arrays once; fusing keeps the intermediate in a register instead of writing it out and reading it back:
//   add_bias + relu    y = ReLU(x + b) as two kernels (t = x + b, then y = max(t, 0)): t goes to memory and back.
//   add_bias_relu      the same in one kernel: t never leaves the register.
//   cos_pass twice     x.cos().cos() unfused; cos_cos fused: one read and one write, two cosines in registers.
//   relu_pass, gelu    one pass each: GELU's dozens of FLOPs cost about what ReLU's one does when memory is the limit.
//   chain_op / chain   L multiply-adds as L passes, or one pass doing all L.
// cos, exp and tanh are vector polynomials (kernels/common/simd.h), not a library call per element, and the passes
// heavy in arithmetic ask for their input lines ahead: on a 2-core CPU two fused cosines cost about what one does.
// Each has a double-precision reference (the `*_reference` functions) the tests and the lesson check outputs against.
#include <cstdint>

#include "kernels/common/stores.h"
#include "kernels/fusion/fusion_math.h"

namespace dlsys::fusion {

// x, t, y: (rows, cols) row-major; b: (cols) when broadcast, (rows, cols) when full.
void add_bias(float* t, const float* x, const float* b, std::int64_t rows, std::int64_t cols, Bias bias, int threads,
              Stores stores);
void relu_pass(float* y, const float* t, std::int64_t n, int threads, Stores stores);
void add_bias_relu(float* y, const float* x, const float* b, std::int64_t rows, std::int64_t cols, Bias bias,
                   int threads, Stores stores);
double add_bias_relu_reference(float x, float b);

void cos_pass(float* y, const float* x, std::int64_t n, int threads, Stores stores);
void cos_cos(float* y, const float* x, std::int64_t n, int threads, Stores stores);
void gelu_pass(float* y, const float* x, std::int64_t n, int threads, Stores stores);
double cos_cos_reference(float x);
// GELU with the tanh approximation (GPT-2, BERT) in double.
double gelu_reference(float x);

// One operation of the chain (v <- chain_a(l) v + chain_c(l)) as its own pass, and operations 0..length-1 in one.
void chain_op(float* y, const float* x, std::int64_t n, int l, int threads, Stores stores);
void chain_fused(float* y, const float* x, std::int64_t n, int length, int threads, Stores stores);
double chain_reference(float x, int length);

}  // namespace dlsys::fusion
