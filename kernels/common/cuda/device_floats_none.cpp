// Built when the CUDA backend is not: nothing here can reach a GPU, and each call says why.
#include "engine/backend.h"
#include "engine/errors.h"
#include "kernels/common/device_floats.h"

namespace dlsys::cuda {

DeviceFloats::DeviceFloats(std::int64_t count) : count_(count) { throw RunFailure(cuda_status().reason); }
DeviceFloats::~DeviceFloats() = default;
void DeviceFloats::upload(const float*) { throw RunFailure(cuda_status().reason); }
void copy_to_host(float*, const float*, std::int64_t) { throw RunFailure(cuda_status().reason); }
double event_elapsed_us(const std::function<void()>&) { throw RunFailure(cuda_status().reason); }
void synchronize() { throw RunFailure(cuda_status().reason); }
std::int64_t free_device_bytes() { throw RunFailure(cuda_status().reason); }

}  // namespace dlsys::cuda
