// Built when the CUDA backend is not: nothing here can reach a GPU, and each call says why.
#include "engine/backend.h"
#include "engine/errors.h"
#include "kernels/common/device_buffer.h"

namespace dlsys::cuda {

namespace {
[[noreturn]] void unavailable() { throw RunFailure(cuda_status().reason); }
}  // namespace

void* device_allocate(std::int64_t) { unavailable(); }
void device_free(void*) {}
void copy_to_device(void*, const void*, std::int64_t) { unavailable(); }
void copy_to_host_bytes(void*, const void*, std::int64_t) { unavailable(); }
double event_elapsed_us(const std::function<void()>&) { unavailable(); }
void synchronize() { unavailable(); }

}  // namespace dlsys::cuda
