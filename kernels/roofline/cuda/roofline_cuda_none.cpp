// Built when the CUDA backend is not: the roofline lesson then never chooses it, and a direct call says why.
#include "engine/backend.h"
#include "engine/errors.h"
#include "kernels/roofline/roofline_cuda.h"

namespace dlsys::roofline::cuda {

namespace {
[[noreturn]] void unavailable() { throw RunFailure(cuda_status().reason); }
}  // namespace

void stream_copy(float*, const float*, std::int64_t) { unavailable(); }
void stream_scale(float*, const float*, float, std::int64_t) { unavailable(); }
void stream_add(float*, const float*, const float*, std::int64_t) { unavailable(); }
void stream_triad(float*, const float*, const float*, float, std::int64_t) { unavailable(); }
int fma_peak_blocks() { unavailable(); }
int fma_peak_chains() { unavailable(); }
std::int64_t fma_peak_threads() { unavailable(); }
void fma_peak(float*, std::int64_t) { unavailable(); }
double fma_peak_flop(std::int64_t) { unavailable(); }
void fma_family(float*, const float*, std::int64_t, std::int64_t) { unavailable(); }
void softmax_rows(float*, const float*, std::int64_t, std::int64_t) { unavailable(); }
void gemv_bf16(float*, const std::uint16_t*, const float*, std::int64_t, std::int64_t) { unavailable(); }
CallCosts scale_call_costs(float*, const float*, std::int64_t, int) { unavailable(); }
double empty_launch_and_wait_us(int) { unavailable(); }

}  // namespace dlsys::roofline::cuda
