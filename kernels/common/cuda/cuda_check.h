#pragma once
// Error handling for CUDA code: every runtime and cuBLAS call is checked and failures become RunFailure with the
// call, the file and line, and the library's own message.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "engine/errors.h"
#include "engine/measure.h"
#include "kernels/common/device_buffer.h"

namespace dlsys::cuda {

[[noreturn]] void fail(const char* what, const std::string& why, const char* file, int line);

inline void check(cudaError_t err, const char* what, const char* file, int line) {
  if (err != cudaSuccess) fail(what, cudaGetErrorString(err), file, line);
}
inline void check(cublasStatus_t status, const char* what, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS) fail(what, cublasGetStatusString(status), file, line);
}

// Device memory freed when it leaves scope, also when a later call throws.
template <typename T>
class DeviceArray {
 public:
  explicit DeviceArray(std::size_t count) : count_(count) {
    check(cudaMalloc(&data_, count * sizeof(T) + 1), "cudaMalloc", __FILE__, __LINE__);
  }
  ~DeviceArray() { cudaFree(data_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* get() { return data_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

// A start and a stop event on the current device, destroyed when the owner goes, also when a timed call throws.
class TimingEvents {
 public:
  TimingEvents() {
    check(cudaEventCreate(&start), "cudaEventCreate", __FILE__, __LINE__);
    check(cudaEventCreate(&stop), "cudaEventCreate", __FILE__, __LINE__);
  }
  ~TimingEvents() {
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
  }
  TimingEvents(const TimingEvents&) = delete;
  TimingEvents& operator=(const TimingEvents&) = delete;
  // Microseconds from start to stop, waiting for stop to complete.
  double elapsed_us() const {
    check(cudaEventSynchronize(stop), "cudaEventSynchronize", __FILE__, __LINE__);
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime", __FILE__, __LINE__);
    return double(ms) * 1e3;
  }

  cudaEvent_t start = nullptr, stop = nullptr;
};

// Times `launch` with CUDA events on the default stream: warm-up calls untimed, then one event pair per repeat
// (engine/measure.h's routine with the CUDA event timer).
template <typename Launch>
TimingStats time_with_events(const Launch& launch, const MeasureOptions& options) {
  return measure_with_events([&] { launch(); }, options);
}

}  // namespace dlsys::cuda

#define DLSYS_CUDA_CHECK(call) ::dlsys::cuda::check((call), #call, __FILE__, __LINE__)
