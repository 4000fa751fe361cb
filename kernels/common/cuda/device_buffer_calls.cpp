// The program's side of these CUDA entry points: each call goes through the CUDA library's table
// (kernels/common/cuda_kernels.h), which throws RunFailure saying why where the library is absent.
#include "engine/errors.h"
#include "kernels/common/cuda_kernels.h"

namespace dlsys {

const CudaKernels& cuda_kernels() {
  const CudaPlugin* plugin = cuda_plugin();
  if (!plugin) throw RunFailure(cuda_status().reason);
  return *plugin->kernels;
}

namespace cuda {

void* device_allocate(std::int64_t bytes) { return cuda_kernels().device.device_allocate(bytes); }
void device_free(void* device) {
  if (device) cuda_kernels().device.device_free(device);  // nothing was allocated where there is no library
}
void copy_to_device(void* device, const void* host, std::int64_t bytes) {
  cuda_kernels().device.copy_to_device(device, host, bytes);
}
void copy_to_host_bytes(void* host, const void* device, std::int64_t bytes) {
  cuda_kernels().device.copy_to_host_bytes(host, device, bytes);
}
double event_elapsed_us(const std::function<void()>& launch) { return cuda_kernels().device.event_elapsed_us(launch); }
void synchronize() { cuda_kernels().device.synchronize(); }

}  // namespace cuda

}  // namespace dlsys
