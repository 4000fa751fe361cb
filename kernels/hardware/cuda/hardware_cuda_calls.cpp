// The program's side of these CUDA entry points: each call goes through the CUDA library's table
// (kernels/common/cuda_kernels.h), which throws RunFailure saying why where the library is absent.
#include "kernels/common/cuda_kernels.h"

namespace dlsys::hardware::cuda {

namespace {
const Calls& calls() { return cuda_kernels().hardware; }
}  // namespace

void chase(std::uint32_t* at, const std::uint32_t* lines, std::int64_t steps) { calls().chase(at, lines, steps); }
int read_blocks() { return calls().read_blocks(); }
void read_sum(float* partial, const float* x, std::int64_t n, std::int64_t passes) {
  calls().read_sum(partial, x, n, passes);
}
std::int64_t shared_read_threads() { return calls().shared_read_threads(); }
double shared_read_bytes(std::int64_t iterations) { return calls().shared_read_bytes(iterations); }
void shared_read(float* sink, float one, std::int64_t iterations) { calls().shared_read(sink, one, iterations); }
double sm_clock_mhz() { return calls().sm_clock_mhz(); }
void* pinned_allocate(std::int64_t bytes) { return calls().pinned_allocate(bytes); }
void pinned_free(void* host) { calls().pinned_free(host); }
PeerCopy peer_copy(std::int64_t bytes, const MeasureOptions& options) { return calls().peer_copy(bytes, options); }

}  // namespace dlsys::hardware::cuda
