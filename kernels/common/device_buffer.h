#pragma once
// Arrays on GPU 0 and a CUDA-event timer, for host code that launches kernels through plain C++ functions and never
// includes a CUDA header. Without CUDA in the build, every call throws RunFailure saying why.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "engine/measure.h"

namespace dlsys::cuda {

void* device_allocate(std::int64_t bytes);
void device_free(void* device);
void copy_to_device(void* device, const void* host, std::int64_t bytes);
// Waits for the copy (and for every kernel enqueued before it).
void copy_to_host_bytes(void* host, const void* device, std::int64_t bytes);

// `count` values of T on GPU 0, freed when the object goes.
template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::int64_t count)
      : data_(static_cast<T*>(device_allocate(std::int64_t(sizeof(T)) * (count > 0 ? count : 1)))), count_(count) {}
  ~DeviceBuffer() { device_free(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept : data_(other.data_), count_(other.count_) { other.data_ = nullptr; }
  DeviceBuffer& operator=(DeviceBuffer&&) = delete;
  T* get() { return data_; }
  const T* get() const { return data_; }
  std::int64_t count() const { return count_; }
  void upload(const T* host) { copy_to_device(data_, host, std::int64_t(sizeof(T)) * count_); }

 private:
  T* data_ = nullptr;
  std::int64_t count_ = 0;
};
using DeviceFloats = DeviceBuffer<float>;

// Copies `values` floats from device memory (any DeviceFloats' range) to the host.
inline void copy_to_host(float* host, const float* device, std::int64_t values) {
  copy_to_host_bytes(host, device, std::int64_t(sizeof(float)) * values);
}

// Microseconds the GPU spent on what `launch` enqueued on the default stream, by a CUDA event pair around it.
double event_elapsed_us(const std::function<void()>& launch);
// Waits for everything enqueued so far; a kernel's failure surfaces here as RunFailure.
void synchronize();

// What times one call with a CUDA event pair around it (event_elapsed_us), for engine/measure.h's routines.
inline CallTimer cuda_event_timer() {
  return {"cuda_event", [](const std::function<void()>& launch) { return event_elapsed_us(launch); }};
}

// engine/measure.h's measure() with CUDA events in place of the stopwatch: `options.warmup` untimed calls, then up
// to `options.repeats` timed ones (stopping once they took options.max_total_us), `between` before each.
inline TimingStats measure_with_events(const std::function<void()>& work, const MeasureOptions& options,
                                       const std::function<void()>& between = {}) {
  return measure(work, options, between, cuda_event_timer());
}

}  // namespace dlsys::cuda
