// The program's side of these CUDA entry points: each call goes through the CUDA library's table
// (kernels/common/cuda_kernels.h), which throws RunFailure saying why where the library is absent.
#include "kernels/common/cuda_kernels.h"

namespace dlsys::roofline::cuda {

namespace {
const Calls& calls() { return cuda_kernels().roofline; }
}  // namespace

void stream_copy(float* c, const float* a, std::int64_t n) { calls().stream_copy(c, a, n); }
void stream_scale(float* b, const float* c, float s, std::int64_t n) { calls().stream_scale(b, c, s, n); }
void stream_add(float* c, const float* a, const float* b, std::int64_t n) { calls().stream_add(c, a, b, n); }
void stream_triad(float* a, const float* b, const float* c, float s, std::int64_t n) {
  calls().stream_triad(a, b, c, s, n);
}
int fma_peak_blocks() { return calls().fma_peak_blocks(); }
int fma_peak_chains() { return calls().fma_peak_chains(); }
std::int64_t fma_peak_threads() { return calls().fma_peak_threads(); }
void fma_peak(float* sink, std::int64_t iterations) { calls().fma_peak(sink, iterations); }
double fma_peak_flop(std::int64_t iterations) { return calls().fma_peak_flop(iterations); }
void fma_family(float* y, const float* x, std::int64_t n, std::int64_t k) { calls().fma_family(y, x, n, k); }
void softmax_rows(float* y, const float* x, std::int64_t rows, std::int64_t cols) {
  calls().softmax_rows(y, x, rows, cols);
}
void gemv_bf16(float* y, const std::uint16_t* w, const float* x, std::int64_t rows, std::int64_t cols) {
  calls().gemv_bf16(y, w, x, rows, cols);
}
CallCosts scale_call_costs(float* y, const float* x, std::int64_t n, int calls_per_way) {
  return calls().scale_call_costs(y, x, n, calls_per_way);
}
double empty_launch_and_wait_us(int calls_made) { return calls().empty_launch_and_wait_us(calls_made); }

}  // namespace dlsys::roofline::cuda
