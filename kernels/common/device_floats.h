#pragma once
// fp32 arrays on GPU 0 and a CUDA-event timer, for host code that launches kernels through plain C++ functions and
// never includes a CUDA header. Without CUDA in the build, every member throws RunFailure saying why.
#include <cstdint>
#include <functional>

namespace dlsys::cuda {

class DeviceFloats {
 public:
  explicit DeviceFloats(std::int64_t count);
  ~DeviceFloats();
  DeviceFloats(const DeviceFloats&) = delete;
  DeviceFloats& operator=(const DeviceFloats&) = delete;
  DeviceFloats(DeviceFloats&& other) noexcept : data_(other.data_), count_(other.count_) { other.data_ = nullptr; }
  DeviceFloats& operator=(DeviceFloats&&) = delete;
  float* get() { return data_; }
  const float* get() const { return data_; }
  std::int64_t count() const { return count_; }
  void upload(const float* host);  // all `count` values

 private:
  float* data_ = nullptr;
  std::int64_t count_ = 0;
};

// Copies `values` floats from device memory (any DeviceFloats' range) to the host; waits for the copy.
void copy_to_host(float* host, const float* device, std::int64_t values);

// Microseconds the GPU spent on what `launch` enqueued on the default stream, by a CUDA event pair around it.
double event_elapsed_us(const std::function<void()>& launch);
// Waits for everything enqueued so far; a kernel's failure surfaces here as RunFailure.
void synchronize();
// Bytes of device memory free now on GPU 0.
std::int64_t free_device_bytes();

}  // namespace dlsys::cuda
