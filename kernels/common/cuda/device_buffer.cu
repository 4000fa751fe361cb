// Device memory and event timing behind kernels/common/device_buffer.h.
#include "kernels/common/cuda/cuda_check.h"
#include "kernels/common/device_buffer.h"

namespace dlsys::cuda {

void* device_allocate(std::int64_t bytes) {
  void* device = nullptr;
  DLSYS_CUDA_CHECK(cudaMalloc(&device, std::size_t(bytes)));
  return device;
}

void device_free(void* device) { cudaFree(device); }

void copy_to_device(void* device, const void* host, std::int64_t bytes) {
  DLSYS_CUDA_CHECK(cudaMemcpy(device, host, std::size_t(bytes), cudaMemcpyHostToDevice));
}

void copy_to_host_bytes(void* host, const void* device, std::int64_t bytes) {
  DLSYS_CUDA_CHECK(cudaMemcpy(host, device, std::size_t(bytes), cudaMemcpyDeviceToHost));
}

double event_elapsed_us(const std::function<void()>& launch) {
  const TimingEvents events;
  DLSYS_CUDA_CHECK(cudaEventRecord(events.start));
  launch();
  DLSYS_CUDA_CHECK(cudaGetLastError());
  DLSYS_CUDA_CHECK(cudaEventRecord(events.stop));
  return events.elapsed_us();
}

void synchronize() {
  DLSYS_CUDA_CHECK(cudaGetLastError());
  DLSYS_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace dlsys::cuda
