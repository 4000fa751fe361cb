// Device arrays and event timing behind kernels/common/device_floats.h.
#include "kernels/common/cuda/cuda_check.h"
#include "kernels/common/device_floats.h"

namespace dlsys::cuda {

DeviceFloats::DeviceFloats(std::int64_t count) : count_(count) {
  DLSYS_CUDA_CHECK(cudaMalloc(&data_, sizeof(float) * std::size_t(count > 0 ? count : 1)));
}

DeviceFloats::~DeviceFloats() { cudaFree(data_); }

void DeviceFloats::upload(const float* host) {
  DLSYS_CUDA_CHECK(cudaMemcpy(data_, host, sizeof(float) * std::size_t(count_), cudaMemcpyHostToDevice));
}

void copy_to_host(float* host, const float* device, std::int64_t values) {
  DLSYS_CUDA_CHECK(cudaMemcpy(host, device, sizeof(float) * std::size_t(values), cudaMemcpyDeviceToHost));
}

double event_elapsed_us(const std::function<void()>& launch) {
  cudaEvent_t start, stop;
  DLSYS_CUDA_CHECK(cudaEventCreate(&start));
  DLSYS_CUDA_CHECK(cudaEventCreate(&stop));
  float ms = 0;
  try {
    DLSYS_CUDA_CHECK(cudaEventRecord(start));
    launch();
    DLSYS_CUDA_CHECK(cudaGetLastError());
    DLSYS_CUDA_CHECK(cudaEventRecord(stop));
    DLSYS_CUDA_CHECK(cudaEventSynchronize(stop));
    DLSYS_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  } catch (...) {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    throw;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return double(ms) * 1e3;
}

void synchronize() {
  DLSYS_CUDA_CHECK(cudaGetLastError());
  DLSYS_CUDA_CHECK(cudaDeviceSynchronize());
}

std::int64_t free_device_bytes() {
  std::size_t free_bytes = 0, total_bytes = 0;
  DLSYS_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return std::int64_t(free_bytes);
}

}  // namespace dlsys::cuda
